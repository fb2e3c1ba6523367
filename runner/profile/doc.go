// Package profile knows the agent CLIs: what each one is and how to read
// its screen. Everything here is pure (screens and payloads in, facts out)
// and table-tested on recorded screens without tmux.
//
//   - Profile (profile.go): how to launch a CLI (Argv, ResumeArgv,
//     HeadlessArgv, EnvList), its screen patterns, compiled once by Compile;
//     MergeProfile and FindProfile for the config file's overrides; the turn-end
//     Hook a CLI is given (Hook.Render, Appender).
//   - Builtins, BuiltinProfile (profiles_builtin.go): claude, codex, gemini,
//     opencode, qwen, aider, shell and the sim.
//   - Detect, DetectPane (detect.go): the State of an agent from its screen
//     (ready, busy, needs_input, exited, error…); MaskVolatile.
//   - ScreenAnswer (answer.go): the answer of the last turn, read off the screen.
//   - HookEvent, ParseHookEvent, TurnMatch (hookevent.go): a CLI's turn-end
//     events, and which of them end the turn being watched.
//   - UserHookChain, CodexNotify, MergeJSONEnv (hookchain.go): a user's own
//     hook that runner's must run too (Codex's config.toml is read with
//     the TOML library); opencode-turn-end.js, the OpenCode plugin that
//     writes the turn's end.
//   - parseTOML, FileError (toml.go): TOML values with the line of each
//     key, and errors that name file, line and key.
//
// It runs nothing and talks to no tmux: it imports only leaves of the
// module — internal/textutil (escape stripping), internal/transport (shell
// quoting, the one Quote) and exit (bad-input errors) —, the standard
// library and the TOML library (github.com/pelletier/go-toml/v2, whose
// parser gives the line of every key). TestProfileImportsOnlyLeaves holds
// it to that.
package profile
