// Package tmuxcmd is `runner tmux`: the commands that drive any program in
// a tmux pane from a script (launch, send, keys, capture, wait-prompt,
// wait-idle, exec, list, kill), on runner's private server, --socket's, or
// a registered host's (--host). It parses their flags, calls tmuxctl and
// prints the answer or --json; a timeout, bad input and the exit status
// of a command `exec` ran are errors of a kind (tmuxctl's, package fault's,
// cmdkit.ProgramExit) that package main maps to exit codes.
package tmuxcmd
