// Package open makes what a runner command works on, from the config and
// the environment: the state store, the tmux server (runner's own, one
// --socket names, or a registered host's over its ssh connection), and
// the runner.Env over them (Env). cmd/runner opens them here; nothing
// below it does.
//
// A tmux socket that a sandboxed task may write is refused
// (SocketGuard, SandboxedPlace): an agent there could bind a server of
// its own and have runner's client run a program outside the sandbox.
package open
