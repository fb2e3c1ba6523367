// Package follow reads the state's event stream (state.EventsFile) for
// `runner events` (Run): the history after a cursor, then, when following, each
// event as it is written, once and in order, until the context ends.
//
// It owns what following takes: a tailer that reads the stream's file from
// where it left and, when the stream rotates (the file renamed to
// EventsFile.1, a new one made), the rest of the old file before the new
// one (tail.go); a watch of the stream (fsnotify) that wakes on each write
// of it, on the state directory only while the file is missing, and reads
// at most every followGap, so a burst is read in one go (tail.go); and the
// hub (hub.go): the first follower of a state directory, elected by an
// flock on events.sock.lock, watches the stream and wakes the others over
// the unix socket events.sock, so a write wakes one watch in the kernel,
// not one per follower. A client trusts a hub only when the peer runs as
// the same user (peer_*.go: SO_PEERCRED, LOCAL_PEERCRED) and shows the
// token of the private state directory; it leaves a hub that is gone or
// silent while the stream grows, and takes its place or watches alone.
//
// Which events pass (Filter) and where they go (Options.Line,
// Options.Event) are the caller's; printing is not done here. Events are
// never missed nor repeated: each line is passed on only when its cursor
// is past the last one passed, so a file read twice prints nothing twice.
//
// It imports state and the module's small file helpers only
// (TestImports), runs no tmux or git, and writes in the state directory
// nothing but the hub's socket, lock and token files.
package follow
