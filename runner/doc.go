// Package runner is the core of a task's life: a dispatch (dispatch.go:
// the request made one plan, runner/plan, made whole on this Env in
// dispatchplan.go; the task recorded, queued behind --after), its
// launch (launch.go, with runner/launch: the snapshot, the work tree — the project's or a
// worktree of its own, made by runner/worktree/setup — and the pane on its
// site, site.go:
// this machine or a host), its supervision (supervise.go: ready, delivery,
// the turn, the end) with the turns that follow (send.go: follow-ups,
// resume; msgdeliver.go: queued messages; changes.go: the files each task
// changed and the overlaps between tasks) and reconciliation against live
// panes and processes (runner/reconcile, on this Env in reconcile.go).
//
// Env (env.go) is what the operations need from the outside world, made
// by the composition root, cmd/runner, once per command: a plain struct
// of a dozen methods (the clock, progress and warnings, the task record, the
// hosts, the self-spawn).
//
// Below it, each decision in a package of its own that knows nothing of
// Env, table-tested on its own:
//
//   - runner/profile: agent profiles and screen detection (a screen in, a
//     state out);
//   - runner/spend: what a turn used, and its answer where the hook has
//     none, read from the CLIs' own records of their sessions;
//   - runner/monitor: watching a pane (events in, a decision out);
//   - runner/supervisor: a task's turns (ready, delivery, dialogs) and
//     where a turn and a supervision end (Ending, Conclude), through small
//     interfaces (Pane, Watcher, Book);
//   - runner/taskbook: the task's record as the supervisor's Book (the
//     turn's end, budgets judged, the commit, the release);
//   - runner/record: the task record's durable writes and the journal;
//   - runner/messaging: the queue's rules, awareness, lineage;
//   - runner/overlap: which tasks changed the same files, and whom to tell;
//   - runner/changes: the files each task changed, recorded with their
//     overlaps and told (changes.go runs it on this Env);
//   - runner/budget: a tree's budgets, passed or not (budget.go stops what
//     a passed one stops);
//   - runner/settings: what a task runs with, as recorded with it;
//   - runner/notify: telling the user a task ended (the status line, the
//     notify command);
//   - runner/reconcile: what became of the tasks nothing supervises, and
//     whether a recorded process still is the one recorded;
//   - runner/caller: which task the calling process runs under;
//   - runner/door: the one channel between a sandboxed agent and runner
//     (a task's door served in doorserve.go);
//   - runner/deps: the rules of ordering (dispatch --after);
//   - runner/plan: a dispatch request made one plan, once (the agent, the
//     place, the policy's defaults, the worktree, the sandbox, the budgets),
//     checked where the task runs through a plan.Machine (dispatchplan.go);
//   - runner/enqueue: a planned task recorded, queued;
//   - runner/launch: a queued task started (its snapshot, its worktree,
//     its pane through a launch.Machine, launch.go's starter);
//   - runner/hookinstall: an agent CLI's turn-end hook written for a task;
//   - runner/confine: what a sandboxed task may touch (its sandbox's spec,
//     its temp folder, its copies of the CLI's directories);
//   - runner/projects: the registry and where a task works;
//   - runner/ports: each task's range of TCP ports;
//   - runner/hosts: the registered hosts and the connections to them (a
//     Pool the composition root passes in Env.Hosts);
//   - runner/remote: a task on a host (its files there, its launch's
//     checks, the stream of its files back, Mirror);
//   - runner/worktree/setup: making a task's worktree and making it ready;
//   - runner/doctor (what runner needs, checked), runner/sandbox,
//     runner/config, runner/proctree, runner/fault (the kinds of error
//     cmd maps to exit codes).
//
// Above it, what a user does with tasks once they run, each imported only
// by cmd/runner and by one another for types (gc and group use worktree's,
// group ask's). None takes Env or
// imports this package: each takes a small Deps of what it uses (the
// store, a tmux client, the clock…) and of what it asks of this package
// (Reconcile, GetTask, CallerTask…) as functions, built from the Env by
// cmd/runner (deps.go):
//
//   - runner/tasks: list, wait, attach, the tree of tasks, usage;
//   - runner/mailbox: runner msg, inbox;
//   - runner/ask: questions answered by shadows;
//   - runner/worktree: the worktrees of tasks, listed and merged;
//   - runner/gc: reclaiming finished tasks, and cancel's kill path;
//   - runner/watch: the live view;
//   - runner/group: one task run by several agents, the best kept;
//   - runner/explain, runner/snapshots, runner/stateinfo,
//     runner/eventtext, runner/buildinfo: what the commands say (why a
//     profile reads a pane so, snapshot's words, the state's summary, an
//     event's line, the version).
//
// runner/agentsim, the simulated agent behind `runner agent-sim`, stands
// apart: cmd/runner runs it, and it imports nothing of runner/.
//
// Below everything: the leaves tmuxctl, state and gitsnap (they never
// import each other nor any runner package), and internal/ (clock,
// procinfo — process facts, the platform seam —, privdir, filelock,
// atomicfile, transport — ssh and the one shell quoting —, textutil,
// ctxtime, untrusted and tailfile — opening and tail-reading a file an
// agent can write —, and test support).
package runner
