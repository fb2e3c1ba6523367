// Package messaging is the pure side of what tasks tell each other: state
// in, text or decisions out, no tmux and no I/O, table-tested on its own.
//
//   - awareness.go: RenderAwareness, the note a prompt carries of what the
//     other agents are doing (ParseAwarenessMode, the modes), and OneLine.
//   - prompt.go: Prompt, the text that delivers a batch of messages to an
//     agent (a header per message, how to answer).
//   - queue.go: DropQueue and FailStaleClaims, what becomes of a task's
//     queue when it ends or its delivering supervisor is gone.
//
// The runner package posts (PostMessage), delivers (the supervisor's
// message turns), asks (Ask) and resolves recipients, through Env.
package messaging
