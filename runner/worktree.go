// A git worktree per task, made at its start (runner/worktree/setup), and
// where it starts from (dispatch --from).

package runner

import (
	"context"
	"fmt"

	"github.com/runner-cli/runner/runner/settings"
	wtsetup "github.com/runner-cli/runner/runner/worktree/setup"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/state"
)

// startWorktree makes task's worktree at its snapshot (setup.Start).
func startWorktree(ctx context.Context, env *Env, task *state.Task, snap *gitsnap.Snapshot, w *config.WorktreeSetup) (wtsetup.Made, error) {
	return wtsetup.Start(ctx, task, snap, w, wtsetup.Where{
		Host:    func(ctx context.Context) (*hosts.Conn, error) { return env.Hosts.Conn(ctx, task.Tmux.Host) },
		Log:     env.Store.TaskFile(state.FileLog, task.ID),
		Journal: func(ctx context.Context, kind, text string) { env.Record().Journal(ctx, task, kind, text) },
	})
}

// snapshotDir is the directory whose state a task starts from: its own,
// or with --from the other task's worktree, whose leftovers are committed
// on its branch first.
func snapshotDir(ctx context.Context, env *Env, task *state.Task, spec *settings.Start) (string, error) {
	if spec.From == "" {
		return task.Dir, nil
	}
	from, err := env.Record().Task(ctx, spec.From)
	if err != nil {
		return "", fmt.Errorf("start from task %s: %w", spec.From, err)
	}
	text, _ := env.Store.TaskText(from)
	if from.Tmux.Host != task.Tmux.Host {
		return "", fault.Usagef("--from %s: that task ran on %s, this one on %s: start from a task of the same machine", from.ID, hosts.Machine(from.Tmux.Host), hosts.Machine(task.Tmux.Host))
	}
	if ctx, err = env.GitContext(ctx, from); err != nil {
		return "", err
	}
	if _, err := gitsnap.Commit(ctx, from.Dir, gitsnap.CommitOptions{TaskID: from.ID, Task: text, Project: from.Project, Agent: from.Agent, Snapshot: from.ID, All: true}); err != nil {
		return "", fmt.Errorf("start from task %s: commit what its agent left in %s: %w", from.ID, from.Dir, err)
	}
	return from.Dir, nil
}
