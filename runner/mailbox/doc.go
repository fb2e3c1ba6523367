// Package mailbox is messages between tasks as a user or an agent sees
// them: `runner msg` (Post: recipients resolved, loop limits and merging
// applied under the state lock by package messaging, idle recipients
// woken by starting their supervisor) and `runner inbox` (Inbox, Queues).
// Delivering a queued message into a pane at a turn's end is the
// supervisor's, in package runner.
//
// It sits above package runner and takes a Deps built by cmd/runner from
// its Env: the store and the journal (Store, Journal), the clock, and
// runner's reconciliation, CallerTask, RemotePaneAlive and
// StartDeliveries through Core, interfaces it declares (a fake in its
// tests); it imports nothing of package runner (TestTakesDepsNotEnv).
// Of the module it imports runner/messaging, runner/projects,
// runner/reconcile, runner/fault, state, tmuxctl and internal/textutil
// (its text: WriteInbox) (TestImports).
package mailbox
