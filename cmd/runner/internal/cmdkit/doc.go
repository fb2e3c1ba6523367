// Package cmdkit is what runner's command families take from package main
// (cmd/runner), in the manner of cli/cli's cmdutil.Factory: the streams,
// the environment, what a command opens (the config, the state store, the
// runner environment, a tmux client), --json (the flag, and the JSON
// printed), the text a command reads (an argument, --file, stdin), and the
// kinds of error a command returns for main to map.
//
// A family (cmd/runner/internal/tmuxcmd, statecmd, snapshotcmd, hostcmd,
// agentscmd) builds its cobra commands from a *Factory; package main builds
// the one real Factory over its app, and a family's tests build a fake one
// over buffers (Fake). Exit codes stay in package main: a family returns
// an error of a kind (package fault, the leaves' sentinels, or this
// package's FlagError, SilentError and ProgramExit) and main's one table
// maps it.
package cmdkit
