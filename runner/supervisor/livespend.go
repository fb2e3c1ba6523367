package supervisor

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/ctxtime"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/spend"
	"github.com/runner-cli/runner/state"
)

// liveSpendEvery is how often a running turn's spend is read while its
// task's tree has a token or dollar budget, and liveShownEvery how often
// otherwise, for ps and watch to show it (variables for tests).
var (
	liveSpendEvery = 2 * time.Second
	liveShownEvery = 5 * time.Second
)

// budgetStopGrace is how long a turn whose task a budget ended (recorded
// failed "budget: …" and its agent interrupted, by this supervisor or
// another of its tree) has to show its end on the screen before its wait
// ends anyway: a CLI whose screen still reads as a turn after the
// interrupt (Cline's tool line left open) held the task's supervisor,
// and a foreground dispatch or send, to the task's --timeout. A variable
// for tests.
var budgetStopGrace = 10 * time.Second

// errStoppedByBudget is the cause a turn's wait is ended with once
// budgetStopGrace has passed.
var errStoppedByBudget = errors.New("a budget ended the task and its screen did not show the turn's end")

// liveShownShare: without a budget, the wait after a reading is at least
// this many times what it took (one reading in 20 of the time at most).
const liveShownShare = 20

// watchLive reads what the turn being monitored used so far and gives
// each new reading to Book.LiveSpend (Task.Live, which status, ps and
// watch show): every liveSpendEvery while its tree has a budget
// (Book.Budgeted), and then LiveSpend judges it, ending the tree's turns
// once it passes the budget (a long turn is stopped near its budget, not
// at its end); every liveShownEvery without one, and then only once the
// agent wrote something since the last reading (Wrote). It needs the delivered
// prompt (a turn this supervisor delivered). With a budget, once the task
// is recorded failed by it, stopTurn is called budgetStopGrace later
// (errStoppedByBudget) unless the turn ended meanwhile. The returned
// function stops it.
func (s *Supervisor) watchLive(ctx context.Context, stopTurn context.CancelCauseFunc) (stop func()) {
	file := s.Mon.EventsFile()
	s.treeBudgeted = nil
	if s.sig == "" || file == "" || s.Profile == nil || s.Profile.Spend == "" {
		return func() {}
	}
	// Looked up once, as the turn starts: the turn's end asks again only
	// if this did not (see turnSpendNow).
	budgeted := s.Book.Budgeted(ctx)
	s.treeBudgeted = &budgeted
	every := liveShownEvery
	if budgeted {
		every = liveSpendEvery
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	from, sig := s.Mon.Expecting().EventsFrom, s.sig
	go func() {
		defer close(done)
		var last profile.Usage
		for wait := every; ; {
			if !budgeted && s.Wrote != nil {
				// Shown only: nothing new to read until the agent writes
				// (no timer runs meanwhile: a quiet agent wakes nothing),
				// then at most one reading per wait.
				select {
				case <-ctx.Done():
					return
				case <-s.Wrote:
				}
			}
			if ctxtime.Sleep(ctx, wait) != nil {
				return
			}
			if budgeted && s.stoppedByBudget(ctx) {
				if ctxtime.Sleep(ctx, budgetStopGrace) == nil {
					stopTurn(errStoppedByBudget)
				}
				return
			}
			start := clock.Now()
			u, ok := spend.LiveUsage(s.Profile, file, from, sig, s.AgentEnv)
			if ok && profile.SessionTotal(s.Profile.Spend) {
				u, ok = s.lessEarlierTurns(ctx, u)
			}
			// Shown, not judged: a reading that takes long (a CLI's
			// record of many MiB) is taken at most liveShownShare of the
			// time, so that many long turns cost the machine little.
			if wait = every; !budgeted {
				wait = max(every, clock.Since(start)*liveShownShare)
			}
			if !ok || u == last {
				continue
			}
			last = u
			s.Book.LiveSpend(ctx, usageSpend(u, 0), budgeted)
		}
	}()
	return func() { cancel(); <-done }
}

// stoppedByBudget reports whether the task is recorded failed by a
// budget (fault.BudgetReason).
func (s *Supervisor) stoppedByBudget(ctx context.Context) bool {
	t, err := s.Book.Task(ctx)
	return err == nil && t.Status == state.StatusFailed && strings.HasPrefix(t.LastReason(), fault.BudgetReason)
}

// usageSpend is a CLI's usage as runner counts it, over turns turns.
func usageSpend(u profile.Usage, turns int) state.Spend {
	sp := state.Spend{Input: u.Input, Output: u.Output, Cached: u.Cached, Turns: turns}
	if u.HasCost {
		sp.CostUSD = u.CostUSD
		if turns > 0 {
			sp.Costed = turns
		}
	}
	return sp
}
