package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/runner-cli/runner/cmd/runner/exitcode"
	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/gc"

	"github.com/runner-cli/runner/runner"
	"github.com/spf13/cobra"
)

func (a *app) newGCCmd() *cobra.Command {
	var opts gCOptions
	cmd := &cobra.Command{
		Use:   "gc [--older-than D] [--dry-run] [--json]",
		Short: "Close the windows of finished tasks and end every process they started",
		Long: `gc reclaims finished tasks (done, failed, timeout, cancelled, exited) that ended at
least --older-than ago (default: all of them): it closes their tmux windows (a
session left without windows goes with them) and ends every process the task
started, also children that left the pane's process group or session and
daemons of the agent CLIs (found by the RUNNER_TASK_ID and RUNNER_STATE_DIR
that every pane's programs inherit). Windows left by tasks whose records were
pruned are closed too. Processes get SIGTERM, then SIGKILL after 3 s.

Each tmux server is collected by its own gc: a task dispatched on another
socket (--socket, RUNNER_TMUX_SOCKET) has its window closed and the agent
CLI's processes in it ended only by a gc run with that socket ('runner
--socket S gc'); a gc of another socket ends only what left the task's window
(its daemons).

A window that a tmux client is showing is never closed: the task is listed as
skipped. Before a window closes, the agent is asked to quit (its profile's
quit keys) so it prints its session id; runner records it, and
'runner send ID TEXT' later starts the agent again on that conversation.

Without 'runner gc', the config's close_after (default 2h; "0s" keeps windows)
makes dispatch, ps and status start a gc in the background for tasks that
ended longer ago than that (its output goes to gc.log in the state directory).

Task worktrees (dispatch --worktree) of finished tasks are removed with their
runner/<id> branch once the branch is merged; an unmerged one is kept and
listed ('runner merge ID', or --force-worktrees to drop it). A worktree whose
directory was deleted by hand is pruned from git's list.

Exit status: 0 done (also when there was nothing to do), 1 a window could not
be closed or the processes could not be read, 2 bad flags, 5 the state lock
is busy, 130 interrupted. A second gc waits for the first to finish.`,
		Example: `  runner gc --dry-run         # what would be closed and ended
  runner gc --older-than 1h   # tasks that ended more than an hour ago
  runner gc --json`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runGC(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.DurationVar(&opts.olderThan, "older-than", 0, "only tasks that ended longer ago than this (e.g. 2h)")
	f.BoolVar(&opts.dryRun, "dry-run", false, "list what would be closed and ended; change nothing")
	f.BoolVar(&opts.forceWT, "force-worktrees", false, "also remove the worktrees and branches of finished tasks that are not merged (their work is dropped)")
	f.BoolVar(&opts.auto, "auto", false, "the background gc of close_after: quiet when there is nothing to do, skip if another gc runs")
	_ = f.MarkHidden("auto")
	a.jsonFlag(cmd, &opts.asJSON, "print what was done as JSON: {dry_run, tasks: [{id, status, ended, session, pane, window_closed, agent_session, resumable, agent_quit, processes: [{pid, comm, signal}], pruned}], skipped: [{id, pane, reason}], sessions_closed, refs: [{group, host, ref}]}")
	return cmd
}

// gCOptions are the arguments and flags of `runner gc`.
type gCOptions struct {
	olderThan time.Duration
	dryRun    bool
	auto      bool
	forceWT   bool
	asJSON    bool
}

func (a *app) runGC(ctx context.Context, opts gCOptions) error {
	env, _, err := a.runnerEnv(false)
	if err != nil {
		return err
	}
	res, err := gc.Run(ctx, gcDeps(env), gc.Options{OlderThan: opts.olderThan, DryRun: opts.dryRun, NoWait: opts.auto, ForceWorktrees: opts.forceWT})
	if opts.auto && errors.Is(err, gc.ErrBusy) {
		return nil
	}
	if err != nil && res == nil {
		return err
	}
	if opts.asJSON {
		if perr := a.printJSON(res); perr != nil {
			return perr
		}
		if err != nil {
			return &exitcode.Error{Code: exitcode.Of(err), Err: err}
		}
		return nil
	}
	gc.WriteText(a.out, res, opts.auto, clock.Now())
	return err
}

// startAutoGC starts the background gc of close_after when finished tasks
// are due (gc.AutoStart); a failure only warns.
func (a *app) startAutoGC(ctx context.Context, env *runner.Env, cfg *config.Config) {
	if cfg == nil {
		return
	}
	if err := gc.AutoStart(ctx, gcDeps(env), cfg.CloseAfter.Duration, a.getenv("RUNNER_TASK_ID") != ""); err != nil {
		fmt.Fprintf(a.errOut, "runner: warning: %v\n", err)
	}
}
