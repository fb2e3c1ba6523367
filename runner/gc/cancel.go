package gc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/proctree"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/reconcile"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Cancel interrupts a task's agent with its profile's interrupt keys, marks
// it cancelled and stops its supervisor; with kill it also closes the
// task's window.
func Cancel(ctx context.Context, d Deps, ref string, kill bool) (*state.Task, error) {
	return CancelBecause(ctx, d, ref, kill, "cancelled by the user")
}

// CancelBecause is Cancel with the reason the task's record gives (a
// group's budget, say), not the user's.
func CancelBecause(ctx context.Context, d Deps, ref string, kill bool, reason string) (*state.Task, error) {
	t, err := d.GetTask(ctx, ref)
	if err != nil {
		return nil, err
	}
	if t.Status.IsTerminal() && !kill {
		return t, fault.Usagef("task %s already ended (%s); use --kill to close its window", t.ID, t.Status)
	}
	if kill {
		reason += "; window closed"
	}
	if !t.Status.IsTerminal() {
		if err := d.Record.Finish(ctx, t.ID, state.StatusCancelled, reason, nil); err != nil {
			return t, err
		}
		// The supervisor is stopped below and will not notify: say it
		// here (the notify command, the tmux message).
		if nt, err := d.Record.Task(ctx, t.ID); err == nil && nt.Status == state.StatusCancelled {
			if set, err := settings.Of(nt); err == nil {
				d.Notify(ctx, nt, set)
			} else {
				d.Warn("%v: no notification", err)
			}
		}
	}
	if t.SupervisorPID != os.Getpid() && reconcile.SupervisorAlive(t) {
		_ = proctree.SignalAs(t.SupervisorPID, t.SupervisorStart, syscall.SIGTERM)
	}
	if kill {
		// The whole process tree, not only the pane's program: children
		// that left its process group or session too (see killTask).
		if nt, err := d.Record.Task(ctx, t.ID); err == nil {
			t = nt
		}
		if err := killTask(ctx, d, t); err != nil {
			return t, err
		}
	} else if t.Tmux.Pane != "" {
		tc, err := d.PaneClient(ctx, t)
		if err != nil {
			return t, err
		}
		if prof, err := profile.FindProfile(d.Profiles, t.Agent); err == nil && len(prof.InterruptKeys) > 0 {
			if err := tc.SendKeys(ctx, t.Tmux.Pane, prof.InterruptKeys...); err != nil && !errors.Is(err, tmuxctl.ErrNotFound) && !errors.Is(err, tmuxctl.ErrPaneDead) {
				return t, err
			}
		}
	}
	return d.Record.Task(ctx, t.ID)
}

// CancelGroup cancels every candidate of group ref that is still at work
// (with kill, every candidate, its window closed too) and gives back the
// candidates cancelled (not nil once the group was found). A candidate
// that cannot be read or cancelled is skipped and named in the error; a
// group with nothing left to cancel is a usage error (fault.ErrUsage).
func CancelGroup(ctx context.Context, d Deps, ref string, kill bool) ([]*state.Task, error) {
	g, err := d.Store.FindGroup(ctx, ref)
	if err != nil {
		return nil, err
	}
	out := []*state.Task{}
	var errs []error
	for _, id := range g.Tasks {
		t, err := d.GetTask(ctx, id)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if candidateEnded(t) && !kill {
			continue
		}
		if t, err = Cancel(ctx, d, id, kill); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", id, err))
			continue
		}
		out = append(out, t)
	}
	if len(out) == 0 && len(errs) == 0 {
		return nil, fault.Usagef("group %s: every candidate already ended; use --kill to close their windows", g.ID)
	}
	return out, errors.Join(errs...)
}

// candidateEnded reports whether a group's candidate t is no longer at
// work: ended, or waiting for input (group.Ended).
func candidateEnded(t *state.Task) bool {
	return t.Status.IsTerminal() || t.Status == state.StatusNeedsInput
}
