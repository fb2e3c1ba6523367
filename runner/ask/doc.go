// Package ask is `runner ask`: a question put to other tasks and answered
// by a headless copy of each agent (a shadow: the agent's own CLI run once
// with the task's transcript tail and the question, its working tree the
// task's), or, for an agent without a headless mode, posted to it as a
// message (Run). The shadow of a task on a host runs there, in its folder
// there, over the host's shared connection (runShadowThere, through
// Deps.Hosts), in a sandbox there when it would be one here. It sits above
// package runner and posts through the caller's PostFunc (package
// mailbox), so it starts nothing in a pane.
//
// It takes a Deps built by cmd/runner from its Env: the task texts, the
// profiles, the environment (Environment), the hosts (Host), and runner's Reconcile,
// CallerTask, ResolveArgv and ShadowSandbox through Core, an interface it
// declares (open.Core; a fake in its tests); it imports nothing of
// package runner.
package ask
