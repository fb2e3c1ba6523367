// Package tmuxctl is the only code that runs tmux.
//
// A Client (New) is bound to one tmux server (a socket name or path), on
// this machine or on a host (WithTransport: internal/transport's ssh). It
// makes a task's window (Launch, NewSession, NewWindow), types into it
// (Deliver, Paste, SendKeys), reads it (Capture, ListPanes, Pane) and waits
// on it (WaitPrompt, WaitIdle, WaitShellPrompt).
//
// Every tmux invocation goes through one exec helper that takes a context
// and timeout, removes TMUX and TMUX_PANE from the child's environment (so
// a runner started inside tmux never talks to the user's server by
// accident) and keeps tmux's stderr in the returned error.
//
// User text never becomes a tmux argument: it is loaded into a uniquely named
// paste buffer through stdin (load-buffer -) and pasted with paste-buffer -d -p,
// and Enter is sent separately after a delay. Named keys are sent only as keys.
//
// The waits (prompt, idle, shell prompt) take a context and return an error
// wrapping ErrTimeout when their deadline passes. A dead or missing pane, or a
// failed capture, is always an error, never "idle".
package tmuxctl
