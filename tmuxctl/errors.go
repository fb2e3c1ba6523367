package tmuxctl

import "errors"

// ErrTimeout is wrapped by every wait that gave up because its deadline passed.
var ErrTimeout = errors.New("timed out")

// ErrPaneDead is wrapped when the target pane's process has exited (the pane
// is kept by remain-on-exit). A dead pane is never idle and never ready.
var ErrPaneDead = errors.New("pane is dead")

// ErrNotFound is wrapped when the target session, window or pane does not
// exist, or the server is not running.
var ErrNotFound = errors.New("not found")
