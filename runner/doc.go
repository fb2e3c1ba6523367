// Package runner is the domain of the runner tool, and the operations the
// commands call: projects, dispatch (a task recorded, its snapshot, its
// pane started, its supervisor), follow-ups and resume (send), messages
// and ask, waiting (wait, --after), reconciliation against live panes and
// processes, gc, worktrees and remote tasks.
//
// The decisions it takes live in sub-packages that know nothing of Env,
// each table-tested on its own:
//
//   - runner/profile: agent profiles and screen detection (a screen in, a
//     state out);
//   - runner/monitor: watching a pane (events in, a decision out: the
//     turn's end, a dialog, the pane's death);
//   - runner/supervisor: a task's turns (ready, delivery, dialogs, the
//     turn's end and its record), through a Pane (tmuxctl.Client), a
//     Watcher (the monitor) and a Book (the task's record, kept here by
//     taskBook);
//   - runner/messaging: the queue's rules (posting, merging, loop limits,
//     the delivery batch), awareness, the message prompt, ask's targets
//     and the lineage (tree, collect);
//   - runner/hosts: the registered hosts and the connections to them (a
//     Pool the composition root makes and passes in Env.Hosts);
//   - runner/sandbox: bubblewrap argv and checks (dispatch --sandbox);
//   - runner/config: the config file (load, validate, profiles, defaults);
//   - runner/record: the task record's durable writes and the journal;
//   - runner/doctor: what runner needs, checked (and the agents found);
//   - runner/agentsim: the simulated agent; runner/proctree: process
//     trees (pidfds, never another uid's or a tmux server); runner/exit:
//     exit codes and error kinds.
//
// runner/watch, the live view, sits above this package, as cmd/runner
// does.
//
// Below everything, internal/: privdir (this user's private directories),
// filelock, transport (ssh, the one shell quoting), textutil (text helpers,
// escapes made visible or stripped), ctxtime (the one Sleep), mockapi and
// sshtest (test support).
//
// It is the only package that combines the three leaves (tmuxctl, state,
// gitsnap); the leaves never import each other or this package. cmd/runner
// only parses flags, calls into this package and prints.
package runner
