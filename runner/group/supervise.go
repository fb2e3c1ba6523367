package group

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/proctree"
	"github.com/runner-cli/runner/state"
)

// Ended reports whether candidate t has ended for its group: its task
// ended, or it stopped on a question nobody answered, or its host stopped
// answering (orphaned there: it did not succeed; `runner resume` may
// still see it through, outside the group's count).
func Ended(t *state.Task) bool {
	return t == nil || t.Status.IsTerminal() || t.Status == state.StatusNeedsInput ||
		(t.Status == state.StatusOrphaned && t.Tmux.Host != "")
}

// Lost names g's candidates orphaned on a host, each with its reason
// ("t_x on host b: host b unreachable since …"), in the order given.
func Lost(g *state.Group, tasks map[string]*state.Task) []string {
	var out []string
	for _, id := range g.Tasks {
		if t := tasks[id]; t != nil && t.Status == state.StatusOrphaned && t.Tmux.Host != "" {
			out = append(out, id+" on host "+t.Tmux.Host+": "+textutil.Headline(t.LastReason(), 120))
		}
	}
	return out
}

// Succeeded reports whether candidate t of g did the task: done, and its
// check (if g has one) passed.
func Succeeded(g *state.Group, t *state.Task) bool {
	return t != nil && t.Status == state.StatusDone && (g.Check == "" || t.Check.Passed())
}

// Outcome counts g's candidates that succeeded, of all of them.
func Outcome(g *state.Group, tasks map[string]*state.Task) (succeeded, total int) {
	for _, id := range g.Tasks {
		if Succeeded(g, tasks[id]) {
			succeeded++
		}
	}
	return succeeded, len(g.Tasks)
}

// Supervise sees group id through: it waits for each candidate's turn to
// end, runs the group's check in its worktree (and sends a failed check
// back to the agent while retries are left), and once every candidate has
// ended holds the vote (if asked) and records the group's end. It returns
// the group as it ended, and its candidates' records.
func Supervise(ctx context.Context, d Deps, id string) (*state.Group, map[string]*state.Task, error) {
	if err := d.Store.UpdateGroup(ctx, id, func(g *state.Group) error {
		g.SupervisorPID = os.Getpid()
		g.SupervisorStart = proctree.Identity(os.Getpid())
		return nil
	}); err != nil {
		return nil, nil, err
	}
	changes, err := d.Store.Watch(ctx)
	if err != nil {
		return nil, nil, err
	}
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		g, tasks, ended, err := step(ctx, d, id)
		if err != nil {
			return nil, nil, err
		}
		if ended {
			return finish(ctx, d, g, tasks)
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-changes:
		case <-tick.C:
		}
	}
}

// step looks at every candidate once: it checks those whose turn ended
// done since their last check, and says whether all have ended.
func step(ctx context.Context, d Deps, id string) (*state.Group, map[string]*state.Task, bool, error) {
	g, err := d.Store.FindGroup(ctx, id)
	if err != nil {
		return nil, nil, false, err
	}
	if _, err := d.Tasks.Reconcile(ctx); err != nil {
		return nil, nil, false, err
	}
	tasks := map[string]*state.Task{}
	all := true
	for _, tid := range g.Tasks {
		t, err := d.Tasks.Task(ctx, tid)
		if err != nil {
			return nil, nil, false, err
		}
		tasks[tid] = t
		if !Ended(t) {
			all = false
			continue
		}
		if g.Check != "" && t.Status == state.StatusDone && (t.Check == nil || t.Check.Ran.Before(t.Ended)) {
			if retried := checkOne(ctx, d, g, t); retried {
				all = false
			}
			if nt, err := d.Tasks.Task(ctx, tid); err == nil {
				tasks[tid] = nt
			}
		}
	}
	if !all && g.Stopped == "" {
		if reason := overBudget(g, tasks); reason != "" {
			stopGroup(ctx, d, g, tasks, reason)
		}
	}
	return g, tasks, all, nil
}

// overBudget says how g's candidates together went past its budget ("":
// they did not, or it has none).
func overBudget(g *state.Group, tasks map[string]*state.Task) string {
	var sum state.Spend
	for _, t := range tasks {
		if t != nil {
			sum = sum.Add(t.SpendSoFar())
		}
	}
	switch {
	case g.BudgetTokens > 0 && sum.Tokens() >= g.BudgetTokens:
		return fmt.Sprintf("budget: group %s used %d tokens of its %d", g.ID, sum.Tokens(), g.BudgetTokens)
	case g.BudgetUSD > 0 && sum.CostUSD >= g.BudgetUSD:
		return fmt.Sprintf("budget: group %s cost $%.4f of its $%.2f", g.ID, sum.CostUSD, g.BudgetUSD)
	}
	return ""
}

// stopGroup cancels g's candidates still at work and records why.
func stopGroup(ctx context.Context, d Deps, g *state.Group, tasks map[string]*state.Task, reason string) {
	d.Say("group %s: %s: cancelling the candidates still at work", g.ID, reason)
	for _, id := range g.Tasks {
		if t := tasks[id]; t != nil && !Ended(t) {
			if err := d.Tasks.Cancel(ctx, id, reason); err != nil {
				d.Say("group %s: cancel %s: %v", g.ID, id, err)
			}
		}
	}
	if err := d.Store.UpdateGroup(ctx, g.ID, func(x *state.Group) error { x.Stopped = reason; return nil }); err != nil {
		d.Say("group %s: record its stop: %v", g.ID, err)
	}
	g.Stopped = reason
}

// checkOne runs g's check in candidate t's folder and records it; a check
// that failed goes back to the agent as a follow-up turn while retries
// are left (true: a turn was sent).
func checkOne(ctx context.Context, d Deps, g *state.Group, t *state.Task) (retried bool) {
	var wrap func([]string) ([]string, error)
	if len(t.Sandbox) > 0 && d.Sandbox != nil {
		wrap = func(argv []string) ([]string, error) { return d.Sandbox.Wrap(ctx, t, argv) }
	}
	d.Say("group %s: task %s (%s): check: %s", g.ID, t.ID, t.Agent, g.Check)
	res := runCheck(ctx, d, t, g, wrap)
	res.Ran = d.Now()
	runs := 1
	if t.Check != nil {
		runs = t.Check.Runs + 1
	}
	res.Runs = runs
	if err := d.Store.UpdateTask(ctx, t.ID, func(x *state.Task) error {
		x.Check = &res
		return nil
	}); err != nil {
		d.Say("group %s: task %s: record its check: %v", g.ID, t.ID, err)
		return false
	}
	d.Say("group %s: task %s: check %s", g.ID, t.ID, CheckSummary(&res))
	if res.Passed() || runs > g.CheckRetry {
		return false
	}
	text := fmt.Sprintf("The check `%s` failed in your folder (%s). Fix it; the end of its output:\n\n%s",
		g.Check, CheckSummary(&res), textutil.ClipBytes(res.Tail, 3000))
	if err := d.Tasks.Send(ctx, t.ID, text); err != nil {
		d.Say("group %s: task %s: send its failed check back (retry %d of %d): %v", g.ID, t.ID, runs, g.CheckRetry, err)
		return false
	}
	d.Say("group %s: task %s: failed check sent back (retry %d of %d)", g.ID, t.ID, runs, g.CheckRetry)
	return true
}

// runCheck runs g's check in t's folder: here, or on t's host (a
// sandboxed candidate's in a sandbox like its agent's there:
// Deps.Sandbox's WrapThere).
func runCheck(ctx context.Context, d Deps, t *state.Task, g *state.Group, wrap func([]string) ([]string, error)) state.CheckResult {
	if t.Tmux.Host == "" {
		return RunCheck(ctx, t.Dir, g.Check, g.CheckTimeout, wrap)
	}
	wrap = nil
	if len(t.Sandbox) > 0 {
		if d.Sandbox == nil {
			// Never run outside the candidate's sandbox there.
			return state.CheckResult{Command: g.Check, Exit: -1, Ran: d.Now(), Tail: "a sandboxed candidate's check on host " + t.Tmux.Host +
				" is not run: this runner cannot sandbox it there (run it in the candidate's folder yourself, or pick by vote or by hand)"}
		}
		wrap = func(argv []string) ([]string, error) { return d.Sandbox.WrapThere(ctx, t, argv) }
	}
	via, err := d.via(ctx, t.Tmux.Host)
	if err != nil {
		return state.CheckResult{Command: g.Check, Exit: -1, Ran: d.Now(), Tail: "host " + t.Tmux.Host + ": " + err.Error()}
	}
	return RunCheckThere(ctx, via, t.Dir, g.Check, g.CheckTimeout, wrap)
}

// CheckSummary is one line of a check's result: "passed (1.2s)", "failed:
// exit 1 (3s)", "timed out (10m0s)".
func CheckSummary(c *state.CheckResult) string {
	if c == nil {
		return "not run"
	}
	d := c.Duration.Round(100 * time.Millisecond).String()
	switch {
	case c.TimedOut:
		return "timed out (" + d + ")"
	case c.Exit == 0:
		return "passed (" + d + ")"
	case c.Exit < 0:
		return "did not run: " + firstLine(c.Tail)
	}
	return fmt.Sprintf("failed: exit %d (%s)", c.Exit, d)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return textutil.Headline(s, 100)
}

// finish holds the vote when asked and records the group's end.
func finish(ctx context.Context, d Deps, g *state.Group, tasks map[string]*state.Task) (*state.Group, map[string]*state.Task, error) {
	var ballot *state.VoteResult
	if g.Vote && g.Ballot == nil {
		b, err := Vote(ctx, d, g, tasks)
		if err != nil {
			d.Say("group %s: vote: %v", g.ID, err)
		}
		ballot = b
	}
	var out *state.Group
	err := d.Store.UpdateGroup(ctx, g.ID, func(x *state.Group) error {
		if ballot != nil {
			x.Ballot = ballot
		}
		if x.Ended.IsZero() {
			x.Ended = d.Now()
		}
		x.SupervisorPID, x.SupervisorStart = 0, ""
		c := *x
		out = &c
		return nil
	})
	return out, tasks, err
}
