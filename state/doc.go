// Package state is the only code that touches runner's state files: the
// shared state protected by an flock on state.lock, the task records, the
// archive, the append-only journal, the event stream, the hosts and the
// groups, and watching the state directory for changes.
//
// The state directory (see DefaultDir) is created 0700 and every file in it
// is 0600. It holds:
//
//	state.json              the index: projects, the hot fields of the tasks
//	                        still in it, open and recent messages, the list
//	                        of archive segments (index.go)
//	tasks/<id>.<gen>.json   each task's whole record, one file per
//	                        generation that changed its bulk (records.go)
//	archive/<gen>.json      finished tasks the index no longer carries;
//	archive/m<gen>.json     finished messages likewise (archive.go)
//	state.json.prev         the previous index, kept for Repair
//	state.lock              the flock that serialises writers; never renamed
//	ops/                    changes handed to the lock's holder (handover.go):
//	                        NAME.op waiting, NAME.claim taken; in/ the
//	                        inbox fifo of each process that waits (inbox.go)
//	journal.jsonl           the append-only audit trail, rotated by size
//	events.jsonl            the event stream (events.go; followed by
//	                        state/follow), rotated to events.jsonl.N
//	hosts.json, groups.json the hosts and the task groups (hosts.go,
//	                        groups.go): small files of their own
//	logs/, events/, hooks/, each task's own files, whose paths state gives
//	doors/, homes/          (files.go) and others write: its transcript and
//	                        supervisor log, hook events, hook files, door,
//	                        copies of its CLI's folders
//	locks/                  the per-project locks (LockProject)
//	push/                   the push outbox (config notify_push) and its one
//	                        sender's lock and status (push.go)
//
// The cost of an update depends on how many tasks are active, not on how
// many are retained: the index carries ~250 bytes per task for the active
// ones, the finished ones whose window is open and the newest
// ArchiveAfter finished ones; a task's record is written only when its bulk
// (text, history, turns, answer, settings, …) changes; archived tasks sit
// in immutable segments that an ordinary update does not touch.
//
// Update takes an exclusive flock on state.lock (giving up with ErrBusy after
// the store's LockTimeout), reads the index and the records it names
// (cached per process: a path's content never changes), applies the
// caller's function, and writes in this order: the records whose bulk
// changed (each a new file, fsynced, then the tasks directory), the new
// archive segments (likewise), then the index (temporary file, fsync,
// rename, directory fsync). So the index never names a file that is not
// durable. Files the new index no longer names are removed once it is
// durable; a crash in between leaves them listed in the index's retired
// list for the next write. Read never takes the lock: the index is only
// ever replaced by a rename, and a reader that finds a record superseded
// meanwhile reads the new index. UpdateIndex (a dispatch's new task) and
// UpdateTask read the index and only the records of the tasks they ask for
// (State.Task), so their cost does not grow with the active tasks; a
// change to a record field of a task not read fails the write. Callers must not do tmux or git work inside
// an Update function; the lock is held while it runs. Inside an Update,
// State.Task brings an archived task back into the index, so what the
// function changes in it is written.
//
// A state.json written by a newer runner (a higher Version) is refused with
// ErrNewerVersion and never overwritten. A file that does not parse, or
// names a record that is gone, is reported with ErrCorrupt and left in place
// until Repair rebuilds from the previous index, the newest records, the
// archive and the journal. A version 1 or 2 file (every task inline) is read
// as it is and converted by the first write, which keeps it as
// state.json.v<N>-backup.
//
// Updates of one directory made at the same time inside one process are
// combined (see updateQueues): one caller takes the lock and applies all of
// them in order with one durable write; one that fails is rolled back to a
// copy of the state taken before it. Across processes, UpdateTask hands a
// change of one task to whoever holds the lock, as data (the task before
// and after): the holder applies every queued change whose task is still
// as it was read, writes once, and answers each owner once the write is
// durable, before it lets go of the lock (group commit; a conflict is
// made again by its owner under the lock). Everything is plain
// encoding/json.
//
// Schema changes: a runner drops the fields it does not know when it
// rewrites a file. So any new field that an older runner must not drop
// comes with a higher Version, which older runners refuse instead of
// silently rewriting. A Task field is either hot (in the index entry) or
// bulk (in the record only): TestEveryFieldIsHotOrBulk holds the lists in
// index.go to the struct.
package state
