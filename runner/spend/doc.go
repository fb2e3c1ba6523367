// Package spend reads what the agent CLIs record of their sessions, on
// disk: a turn's spend (never estimated from text) and, where a turn-end
// hook's payload lacks it, the turn's answer. runner/profile is the pure
// side (the Spend key that names a CLI's record, Usage, HookEvent and its
// parsing); this package opens, globs and tail-reads the files.
//
//   - TurnUsage (turn.go): what the turn a hook event ended used, from the
//     record the profile's Spend names: the payload's own usage, Claude
//     Code's transcript, Codex's rollout file (under $CODEX_HOME, else
//     ~/.codex), Gemini CLI's and Qwen Code's chat files (Qwen's found
//     under ~/.qwen), Copilot CLI's events file (under $COPILOT_HOME, else
//     ~/.copilot); Factory Droid's session total (droid.go: the settings
//     file beside its record, of which the supervisor takes the task's
//     earlier turns out). One scanner (scanTurn, scan.go: tail-read, a line at a
//     time, start over at the turn's prompt, sum) reads them all; what
//     differs is a CLI's format (claude.go, codex.go, chat.go): a line
//     decoder and a few flags.
//   - LiveUsage (live.go): what the turn now running used so far, from the
//     task's events file (a usage event) or the record its last event named.
//   - ReadHookEvent, LateAnswer (answer.go): a turn's answer from the
//     record, where the payload's is not whole (Gemini CLI) or not there
//     (Copilot CLI, which writes it after its hook).
//
// Every file it reads is named by an agent or written by one: it is read
// through internal/tailfile (internal/untrusted's rules: a regular file,
// not through a final link, never blocking), its last MiBs only, and a
// session id becomes part of a glob only when it cannot leave its folder.
// It runs nothing and talks to no tmux: TestSpendImports holds its imports
// to runner/profile, internal/tailfile and internal/clock.
package spend
