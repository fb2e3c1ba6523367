// Package messaging is the pure side of what tasks tell each other: state
// in, text or decisions out, no tmux and no I/O, table-tested on its own.
// What it needs of processes (this one, whether a supervisor still runs)
// comes in through Procs; it imports only state, runner/fault, textutil
// and the clock (TestMessagingImportsOnlyLeaves).
//
//   - awareness.go: RenderAwareness, the note a prompt carries of what the
//     other agents are doing (ParseAwarenessMode, the modes), and OneLine.
//   - prompt.go: Prompt, the text that delivers a batch of messages to an
//     agent (a header per message, how to answer).
//   - post.go: the rules a message meets under the state lock (Check,
//     Posting: loop protection by hops and per-tree cap, merging of
//     repeats, the queue's bounds, an idle recipient claimed for delivery),
//     and the batch a supervisor takes for one delivery (Claim, Settle).
//   - queue.go: DropQueue and FailStaleClaims, what becomes of a task's
//     queue when it ends or its delivering supervisor is gone.
//   - ask.go: AskTargets, whom `runner ask` asks (ids, @siblings, @all).
//   - lineage.go: BuildTree and CollectChildren, the tree of tasks that
//     dispatched tasks and what a parent collects of its children
//     (`runner tree`, `runner collect`), with their printers.
//
// The I/O around them is done by their callers, which pass
// reconcile.LiveProcs: runner/mailbox looks at the recipients' panes
// before the lock, runs Posting under it, journals each outcome and starts
// the deliveries (mailbox.Post), and resolves recipients (@parent,
// @siblings, @project:NAME); the supervisor's message turns (package
// runner) type a claimed batch in; runner/ask starts the shadows; a
// dispatch's lineage (its caller's pane) is package runner's, since it
// needs tmux.
package messaging
