// Package profile knows the agent CLIs: what each one is and how to read
// its screen. Everything here is pure (screens and payloads in, facts out)
// and table-tested on recorded screens without tmux.
//
//   - Profile (profile.go): how to launch a CLI (Argv, ResumeArgv,
//     HeadlessArgv, EnvList), its screen patterns, compiled once by Compile;
//     MergeProfile and FindProfile for the config file's overrides; the turn-end
//     Hook a CLI is given (Hook.Render, Appender).
//   - Agent files (agentfile.go, decode.go): a profile, whole or in part, as
//     TOML; ParseFile and File.Apply read one over a base profile, strictly
//     (unknown keys, wrong types, bad patterns are *FileError with file,
//     line and key), and every key set keeps its Origin, file and line.
//   - Builtins, BuiltinProfile (builtin.go): the agent files embedded from
//     agents/ — claude, codex, gemini, opencode, qwen, copilot, pi, aider,
//     shell and the sim —, made by Go code generated from them
//     (builtin_gen.go, written by go generate; no file is parsed at run
//     time), their patterns compiled once per process, at first use.
//   - Detect, DetectPane (detect.go): the State of an agent from its screen
//     (ready, busy, needs_input, exited, error…) and the rule that decided;
//     MaskVolatile.
//   - Explain, ExplainPane (explain.go): DetectPane's answer with the
//     deciding rule's file and line and what every other rule saw.
//   - ScreenAnswer (answer.go): the answer of the last turn, read off the screen.
//   - HookEvent, ParseHookEvent, TurnMatch (hookevent.go): a CLI's turn-end
//     events, and which of them end the turn being watched. The files an
//     event names (a transcript, a session's chat or events file) are
//     read by runner/spend.
//   - The Spend kinds and Usage (spend.go): which record of the CLI's
//     tells what a turn used, and the usage a payload carries; runner/spend
//     reads the records.
//   - UserHookChain, CodexNotify, MergeJSONEnv (hookchain.go): a user's own
//     hook that runner's must run too (Codex's config.toml, read by the
//     caller's function, parsed with the TOML library); the OpenCode plugin
//     that writes the turn's end is the opencode profile's hook.settings.
//   - Permissions, CheckPermissions, AskModeFor (permissions.go): the
//     --permissions mode a dispatch runs in, and the arguments and
//     variables that make a CLI ask before its tools act.
//   - LimitLine, IsLimitError, ParseReset (limit.go): a usage limit that
//     ended a turn, and when it resets; MenuMove (menu.go), CompareVersions
//     (version.go), CheckTaskSize (tasksize.go).
//   - parseTOML, FileError (toml.go): TOML values with the line of each
//     key, and errors that name file, line and key.
//
// It runs nothing, talks to no tmux and opens no file (the CLIs' records
// of their sessions are runner/spend's to read): it imports only leaves of
// the module — internal/textutil (escape stripping), internal/transport
// (shell quoting, the one Quote), internal/untrusted (Name: a session id
// that can be part of a file name), internal/clock and runner/fault
// (bad-input errors) —, the
// standard library but os, syscall and net, and the TOML library
// (github.com/pelletier/go-toml/v2, whose parser gives the line of every
// key). TestProfileImportsOnlyLeaves and TestProfileOpensNoFile hold it
// to that.
package profile
