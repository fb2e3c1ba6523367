// Reclaiming a task's processes: ask the agent to quit (for its session
// id), pick the processes the task started, end them, close the window,
// record it.

package gc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/ctxtime"
	"github.com/runner-cli/runner/runner/proctree"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// quitAgents asks the live agents of targets to quit with their profile's
// quit keys, all at once, waits up to wait for their panes to die, and
// reads each screen for the agent's session id (a dead pane keeps its last
// screen). A pane that was dead already is only read.
func quitAgents(ctx context.Context, d Deps, targets []*target, wait time.Duration) {
	if wait <= 0 {
		wait = DefaultQuitWait
	}
	var wg sync.WaitGroup
	for _, g := range targets {
		if g.pane == nil || g.task == nil {
			continue
		}
		prof, err := profile.FindProfile(d.Profiles, g.task.Agent)
		if err != nil || len(prof.SessionID) == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, quit := quitAndRead(ctx, d.TC, prof, g.pane, wait)
			if id != "" {
				g.item.AgentSession = id
			}
			g.item.AgentQuit = quit
		}()
	}
	wg.Wait()
}

// quitAndRead sends prof's quit keys to a live pane and waits until it is
// dead (each round of keys waits up to wait/2), then returns the session
// id on its screen and whether the agent quit. Each key after the first
// waits for the screen to answer the one before (a loaded CLI may take a
// moment to show "press Ctrl-C again"; two presses read as one would not
// exit it); a CLI still alive after the keys gets them once more.
func quitAndRead(ctx context.Context, tc Tmux, prof *profile.Profile, pane *tmuxctl.PaneInfo, wait time.Duration) (session string, quit bool) {
	dead := func() bool {
		info, err := tc.Pane(ctx, pane.ID)
		return err != nil || info.Dead
	}
	if !pane.Dead && len(prof.QuitKeys) > 0 {
	rounds:
		for round := 0; round < 2; round++ {
			for i, k := range prof.QuitKeys {
				before, _ := tc.CaptureScreen(ctx, pane.ID)
				if err := tc.SendKeys(ctx, pane.ID, k); err != nil {
					break rounds
				}
				if i == len(prof.QuitKeys)-1 {
					break
				}
				// The next key once the screen answered this one.
				for until := clock.Now().Add(2 * time.Second); clock.Now().Before(until); {
					if ctxtime.Sleep(ctx, profile.QuitGap/3) != nil {
						break rounds
					}
					if now, err := tc.CaptureScreen(ctx, pane.ID); err != nil || now != before {
						break
					}
				}
				if ctxtime.Sleep(ctx, profile.QuitGap/3) != nil {
					break rounds
				}
			}
			for until := clock.Now().Add(wait / 2); clock.Now().Before(until); {
				if dead() {
					quit = true
					break rounds
				}
				if ctxtime.Sleep(ctx, 100*time.Millisecond) != nil {
					break rounds
				}
			}
		}
	}
	screen, err := tc.Capture(ctx, pane.ID, tmuxctl.CaptureOptions{Lines: 80, Join: true})
	if err != nil {
		return "", quit
	}
	return prof.FindSession(screen), quit
}

// endAndClose ends the processes pick chooses (the tree is still whole, so
// nothing is reparented before it is found), then closes the targets'
// windows.
func endAndClose(ctx context.Context, d Deps, targets []*target, pick Picker, owner map[int]string, grace time.Duration) ([]*target, error) {
	if grace <= 0 {
		grace = DefaultKillGrace
	}
	ended, err := d.procs().End(ctx, pick, grace)
	if err != nil && !errors.Is(err, proctree.ErrUnsupported) {
		return targets, fmt.Errorf("end the processes of finished tasks: %w", err)
	}
	targets = attribute(targets, ended, owner)
	var errs []string
	for _, g := range targets {
		if g.pane == nil {
			continue
		}
		if err := d.TC.KillWindow(ctx, g.pane.ID); err != nil && !errors.Is(err, tmuxctl.ErrNotFound) {
			errs = append(errs, err.Error())
			continue
		}
		g.item.WindowClosed = true
	}
	if len(errs) > 0 {
		return targets, fmt.Errorf("close windows of finished tasks: %s (check the tmux server: runner tmux list)", strings.Join(errs, "; "))
	}
	return targets, nil
}

// attribute adds each process to its task's target; a process of a task
// that is no target (its record was pruned, its window gone) gets a target
// of its own.
func attribute(targets []*target, procs []proctree.Ended, owner map[int]string) []*target {
	byID := map[string]*target{}
	for _, g := range targets {
		byID[g.item.ID] = g
	}
	for _, e := range procs {
		id := owner[e.PID]
		g := byID[id]
		if g == nil {
			g = &target{item: Task{ID: id, Pruned: true}}
			byID[id] = g
			targets = append(targets, g)
		}
		g.item.Processes = append(g.item.Processes, e)
	}
	return targets
}

// recordReclaimed marks the targets reclaimed (and records the agent's
// session id found on their screens) and journals it.
func recordReclaimed(ctx context.Context, d Deps, targets []*target, by string) error {
	now := d.Now()
	err := d.Store.Update(ctx, func(s *state.State) error {
		for _, g := range targets {
			if g.task == nil {
				continue
			}
			t := s.Task(g.task.ID)
			if t == nil {
				continue
			}
			if !t.Status.IsTerminal() {
				continue // started again meanwhile
			}
			if g.item.AgentSession != "" {
				t.AgentSession = g.item.AgentSession
			}
			if t.Reclaimed.IsZero() {
				t.Reclaimed = now
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: record the reclaimed tasks: %w", by, err)
	}
	for _, g := range targets {
		if g.pane == nil && len(g.item.Processes) == 0 {
			continue
		}
		msg := fmt.Sprintf("window %s closed: %v, %d process(es) ended", g.item.Pane, g.item.WindowClosed, len(g.item.Processes))
		if g.item.AgentSession != "" {
			msg += "; agent session " + g.item.AgentSession
		}
		t := g.task
		if t == nil {
			t = &state.Task{ID: g.item.ID}
		}
		d.Record.Journal(ctx, t, by, msg)
	}
	return nil
}

// killTask ends a task's processes and closes its window at once (cancel
// --kill): no quit keys, but the session id on the screen is recorded.
func killTask(ctx context.Context, d Deps, t *state.Task) error {
	if t.Tmux.Host != "" {
		return killRemoteTask(ctx, d, t)
	}
	g := &target{task: t, item: Task{ID: t.ID, Status: t.Status, Pane: t.Tmux.Pane, AgentSession: t.AgentSession}}
	var protect []int
	if st, panes, err := d.ReconcilePanes(ctx); err == nil {
		byPane := map[string]tmuxctl.PaneInfo{}
		for _, p := range panes {
			byPane[p.ID] = p
		}
		if p, ok := byPane[t.Tmux.Pane]; ok && ownPane(t, p) {
			g.pane = &p
			if prof, err := profile.FindProfile(d.Profiles, t.Agent); err == nil {
				if screen, err := d.TC.Capture(ctx, p.ID, tmuxctl.CaptureOptions{Lines: 80, Join: true}); err == nil {
					if id := prof.FindSession(screen); id != "" {
						g.item.AgentSession = id
					}
				}
			}
		}
		protect = protectedPIDs(st, byPane)
		protect = slices.DeleteFunc(protect, func(pid int) bool { return g.pane != nil && pid == g.pane.PID })
	}
	pick, owner := taskPicker(ctx, d, []*target{g}, protect, false)
	targets, err := endAndClose(ctx, d, []*target{g}, pick, owner, 0)
	if err != nil {
		return err
	}
	return recordReclaimed(ctx, d, targets, "kill")
}

// killRemoteTask closes the window of a task on a host (tmux there hangs
// up its processes) and records it reclaimed. A window already gone is
// not an error; a pane of that id that is not the task's own window (the
// server there restarted and gave the id to another) is left alone, as
// killTask does here.
func killRemoteTask(ctx context.Context, d Deps, t *state.Task) error {
	c, err := d.Hosts.Conn(ctx, t.Tmux.Host)
	if err != nil {
		return err
	}
	if t.Tmux.Pane != "" {
		panes, err := c.Tmux().ListPanes(ctx)
		if err != nil && !errors.Is(err, tmuxctl.ErrNotFound) {
			return fmt.Errorf("task %s: list the panes on host %s: %w", t.ID, t.Tmux.Host, err)
		}
		for _, p := range panes {
			if p.ID != t.Tmux.Pane {
				continue
			}
			if !ownPane(t, p) {
				d.Warn("task %s: pane %s on host %s is another window now (%s:%s); it is left alone", t.ID, p.ID, t.Tmux.Host, p.Session, p.WindowName)
				break
			}
			if err := c.Tmux().KillWindow(ctx, p.ID); err != nil && !errors.Is(err, tmuxctl.ErrNotFound) {
				return fmt.Errorf("task %s: close its window on host %s: %w", t.ID, t.Tmux.Host, err)
			}
		}
	}
	return d.Record.Update(ctx, t.ID, func(x *state.Task) {
		if x.Reclaimed.IsZero() {
			x.Reclaimed = d.Now()
		}
	})
}
