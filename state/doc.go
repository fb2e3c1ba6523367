// Package state is the only code that touches runner's state files: the
// shared state.json protected by an flock on state.lock, the append-only
// journal, and watching the state directory for changes.
//
// The state directory (see DefaultDir) is created 0700 and every file in it
// is 0600. It holds:
//
//	state.json       the State, rewritten atomically by every Update
//	state.json.prev  the previous generation, kept for Repair
//	state.lock       the flock that serialises writers; never renamed or deleted
//	journal.jsonl    the append-only audit trail, rotated by size
//
// Update takes an exclusive flock on state.lock (giving up with ErrBusy after
// the store's LockTimeout), reads state.json, applies the caller's function,
// writes a temporary file in the same directory, fsyncs it, renames it over
// state.json and fsyncs the directory. Read never takes the lock: since
// state.json is only ever replaced by a rename, a reader sees either the old
// or the new file, never a torn one. Callers must not do tmux or git work
// inside an Update function; the lock is held while it runs.
//
// A state.json written by a newer runner (a higher Version) is refused with
// ErrNewerVersion and never overwritten. A file that does not parse is
// reported with ErrCorrupt and left in place until Repair moves it aside.
//
// Updates of one directory made at the same time inside one process are
// combined (see updateQueues): one caller takes the lock and applies all of
// them in order with one durable write, rolling back any that fails; so
// only one thread per process waits in flock(2). state.json is read and
// written by the package's own codec (codec.go), several times faster than
// encoding/json on large states and held to it byte for byte by
// differential tests; anything unusual in a file is decoded by
// encoding/json instead. A field added to a state struct must
// be added to its codec table: TestCodecCoversEveryField names it.
//
// Schema changes: a runner drops the fields it does not know when it
// rewrites the file. So any new field that an older runner must not drop
// (messages, say) comes with a higher Version, which older runners refuse
// instead of silently rewriting.
package state
