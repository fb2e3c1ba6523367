// Package remote is a task on a host, below the launcher: the task's files
// there (Files), the checks and the pane environment of its launch (Argv,
// PaneEnv, Hook, Prepare, SandboxArgv), and the stream that brings its
// transcript, pane-died lines and hook events back into local copies
// (Stream; Mirror for a task's record, Early for the stream a foreground
// dispatch starts with the agent), which the monitor watches as it watches
// a local task's. All of it goes through a hosts.Conn the caller passes in;
// the launch's checks and its sandbox declare the little of it they use
// (Conn, SandboxConn), so tests give them a fake host.
package remote

import "path"

// Files are a remote task's files on its host: the pane's
// transcript (pipe-pane), the pane-died file its tmux hooks append to,
// and under state/ what the host's runner binary keeps for it (`runner
// hook` appends its turn-end events to state/events/ID.jsonl).
type Files struct {
	Transcript, Died, State, Events, HookDir string
	// Door is the socket a sandboxed agent there reaches runner's door
	// through: forwarded over the shared connection to the door here.
	Door string
}

// FilesIn names the files of task id whose directory there is dir.
func FilesIn(dir string) Files {
	id := path.Base(dir)
	st := path.Join(dir, "state")
	return Files{Transcript: path.Join(dir, "log"), Died: path.Join(dir, "pane-died"), State: st,
		Events: path.Join(st, "events", id+".jsonl"), HookDir: path.Join(dir, "hook"),
		Door: path.Join(dir, "door", "door.sock")}
}
