// The end of a turn as text: what the agent answered, and a one-line
// summary for the record.

package supervisor

import (
	"context"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/ctxtime"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/monitor"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/spend"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// TurnText is what a turn's end records: the agent's answer (its hook's,
// else the screen's), its session, the screen (or history) it was read
// from, and a one-line summary.
type TurnText struct {
	Answer, Session, Screen, Summary string
	// ByHook: the answer is the agent's own, from its hook (or from its
	// record where no hook names it: Cline's).
	ByHook bool
	// Spend is what the turn used, from the CLI's own record
	// (state.UnknownTurn when it has none; zero when no turn was
	// delivered and no hook reported one).
	Spend state.Spend
	// SpendLater is the hook event whose spend the CLI had not written
	// yet: the turn's end is recorded without it, and Conclude reads it
	// and records it right after (nil: Spend is final).
	SpendLater *profile.HookEvent
	// Delivered, when set, records the turn's delivery (the task
	// running), for the end's write to make first: the turn's hook came
	// while its delivery was confirmed (Supervisor.FoldRunning).
	Delivered func(*state.Task)
}

// ReadTurnEnd reads the end of the turn: from the hook's event when it has
// the answer (no capture needed: the record is written at once), else from
// the last 200 lines of history plus the screen (an agent that died leaves
// its last words above tmux's "Pane is dead" line, which scrolls the
// screen).
func (s *Supervisor) ReadTurnEnd(ctx context.Context, o Outcome) TurnText {
	tt := TurnText{Screen: o.Obs.Screen}
	if !s.sent.IsZero() {
		tt.Spend = state.UnknownTurn // a turn was delivered: known below, or unknown
	}
	if h := o.Obs.Hook; h != nil {
		mapped := s.agentPaths(*h)
		h = &mapped
		tt.Spend, tt.SpendLater = s.turnSpendNow(ctx, *h)
		tt.Answer, tt.Session = strings.TrimSpace(h.Answer), h.Session
		if tt.Answer == "" && h.AnswerFile != "" {
			tt.Answer = lateAnswer(ctx, *h, s.sig)
		}
		tt.ByHook = tt.Answer != ""
	} else if !s.sent.IsZero() && s.Profile != nil && spend.FoundByPrompt(s.Profile.Spend) {
		// No hook names the record (Cline's): found by the turn's prompt,
		// its answer too (the screen's is taken when it has none yet).
		tt.Spend, tt.SpendLater = s.turnSpendNow(ctx, profile.HookEvent{})
		if s.AgentEnv != nil && (o.Status == state.StatusDone || o.Status == state.StatusFailed) {
			if a, ok := spend.TurnAnswer(s.Profile, s.sig, s.AgentEnv); ok {
				tt.Answer, tt.ByHook = a, true
			}
		}
	}
	if tt.Answer == "" {
		if hist, err := s.TC.Capture(ctx, s.PaneID, tmuxctl.CaptureOptions{Start: "-200", End: "-"}); err == nil {
			tt.Screen = hist
		}
		if o.Status == state.StatusDone || o.Status == state.StatusFailed {
			tt.Answer = profile.ScreenAnswer(s.Profile, tt.Screen)
		}
	}
	tt.Summary = textutil.FirstLine(tt.Answer)
	if tt.Summary == "" {
		tt.Summary = turnSummary(tt.Screen)
	}
	tt.Summary = textutil.ClipRunes(tt.Summary, 160)
	return tt
}

// turnSpendNow reads what the turn ev ended used, at once. When the CLI
// has not written the turn's end to its record yet, the turn's end is not
// kept waiting for it (later is ev, for Conclude to read after the end is
// recorded) unless a budget of the task's tree must judge that spend
// before anything else happens in the tree: then it waits (turnSpend).
func (s *Supervisor) turnSpendNow(ctx context.Context, ev profile.HookEvent) (sp state.Spend, later *profile.HookEvent) {
	env := s.AgentEnv
	if env == nil {
		env = func(string) string { return "" }
		ev.Transcript = "" // a path on the task's host
	}
	u, ok, complete := spend.TurnUsage(s.Profile, ev, s.sig, env)
	if ok && profile.SessionTotal(s.Profile.Spend) {
		u, ok = s.lessEarlierTurns(ctx, u)
	}
	switch {
	case complete && ok:
		return usageSpend(u, 1), nil
	case complete:
		return state.UnknownTurn, nil
	case s.treeBudgeted != nil && *s.treeBudgeted, s.treeBudgeted == nil && s.Book.Budgeted(ctx):
		return s.turnSpend(ctx, ev), nil
	}
	return state.Spend{}, &ev
}

// turnSpend reads what the turn ev ended used from the agent CLI's own
// record; state.UnknownTurn when there is none. A CLI that runs its hook
// before it writes the turn's end to its record (Claude Code, Qwen Code at
// times) is read again, for up to spendWait, until the record has it.
func (s *Supervisor) turnSpend(ctx context.Context, ev profile.HookEvent) state.Spend {
	env := s.AgentEnv
	if env == nil {
		env = func(string) string { return "" }
		ev.Transcript = "" // a path on the task's host
	}
	var (
		u            profile.Usage
		ok, complete bool
	)
	for deadline := clock.Now().Add(spendWait); ; {
		u, ok, complete = spend.TurnUsage(s.Profile, ev, s.sig, env)
		if complete || clock.Now().After(deadline) || ctxtime.Sleep(ctx, 25*time.Millisecond) != nil {
			break
		}
	}
	if ok && profile.SessionTotal(s.Profile.Spend) {
		u, ok = s.lessEarlierTurns(ctx, u)
	}
	if !ok || !complete {
		// A record without the turn's end would undercount: unknown.
		return state.UnknownTurn
	}
	return usageSpend(u, 1)
}

// lessEarlierTurns is what the turn now ending (or running) used, for a
// CLI whose record gives the session's running total alone
// (profile.SessionTotal: Droid's): total less what the task's turns that
// ended before it used (its Spend). ok is false when that cannot be known: an
// earlier turn's spend is unknown or not read yet, or the total is less
// than theirs (the agent started a new session). A task whose first turn
// resumed a session the CLI had run before counts that session's earlier
// use in its first turn.
func (s *Supervisor) lessEarlierTurns(ctx context.Context, total profile.Usage) (profile.Usage, bool) {
	t, err := s.Book.Task(ctx)
	if err != nil {
		return profile.Usage{}, false
	}
	for _, tr := range t.Turns {
		if tr.SpendPending {
			return profile.Usage{}, false
		}
	}
	before := t.Spend // the turns that ended (the one running is Live)
	u := profile.Usage{Input: total.Input - before.Input, Output: total.Output - before.Output, Cached: total.Cached - before.Cached}
	if before.Unknown > 0 || u.Input < 0 || u.Output < 0 || u.Cached < 0 {
		return profile.Usage{}, false
	}
	return u, true
}

// spendWait bounds turnSpend's wait for the turn's end in the CLI's record.
const spendWait = 3 * time.Second

// ResultTail is what the record keeps of the turn's end: the last 20
// lines of the agent's own answer, else of the screen.
func (tt TurnText) ResultTail() string {
	if tt.ByHook {
		return tailLines(tt.Answer, 20)
	}
	return tailLines(tt.Screen, 20)
}

// tailLines returns the last n non-blank lines of s.
func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	var out []string
	for i := len(lines) - 1; i >= 0 && len(out) < n; i-- {
		l := strings.TrimRight(lines[i], " ")
		if strings.Trim(l, "╭╮╰╯─━│┃ ") == "" {
			continue // blank, or a box border
		}
		// A box row padded to the terminal width: drop the padding.
		if strings.HasSuffix(l, "│") {
			l = strings.TrimRight(strings.TrimSuffix(l, "│"), " ") + " │"
		}
		out = append(out, textutil.ClipRunes(l, 300))
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return strings.Join(out, "\n")
}

// turnSummary is a one-line summary of the turn: the last line of the
// screen that is neither UI chrome (box borders, prompts, spinners,
// footers) nor blank.
func turnSummary(screen string) string {
	lines := strings.Split(tmuxctl.StripEscapes(screen), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(strings.Trim(lines[i], "│┃|╭╮╰╯─━ "))
		if l == "" || strings.HasPrefix(l, ">") || strings.HasPrefix(l, "❯") || strings.HasPrefix(l, "? for") ||
			strings.Contains(l, "esc to interrupt") || strings.HasPrefix(l, "Pane is dead") {
			continue
		}
		if strings.HasPrefix(l, "runner[") {
			continue
		}
		return textutil.ClipRunes(l, 120)
	}
	return ""
}

// lateAnswer waits, up to lateAnswerWait, for the answer to the prompt
// holding sig of a hook event whose agent writes it to its session record
// after its hook ran (GitHub Copilot CLI: a turn late at times).
func lateAnswer(ctx context.Context, ev profile.HookEvent, sig string) string {
	for deadline := clock.Now().Add(lateAnswerWait); ; {
		if a, ok := spend.LateAnswer(ev, sig); ok {
			return strings.TrimSpace(a)
		}
		if clock.Now().After(deadline) || ctxtime.Sleep(ctx, 20*time.Millisecond) != nil {
			return ""
		}
	}
}

// recordedFailure is the outcome of a turn its hook ended whose agent
// records in its session that the turn failed (spend.LateFailure: Factory
// Droid's error, after the prompt): limited when the error is a usage or
// rate limit, else failed with it; nil for a turn that did not fail, or
// whose record says nothing within lateAnswerWait.
func (s *Supervisor) recordedFailure(ctx context.Context, h profile.HookEvent, obs monitor.Observation) error {
	if h.AnswerFile == "" {
		return nil
	}
	h = s.agentPaths(h)
	for deadline := clock.Now().Add(lateAnswerWait); ; {
		failure, ended := spend.LateFailure(h, s.sig)
		if ended && failure == "" {
			return nil
		}
		if ended {
			line := textutil.FirstLine(failure)
			if l, ok := s.Profile.LimitLine(failure); ok {
				return limited(l, obs)
			}
			if profile.IsLimitError(failure) {
				return limited(line, obs)
			}
			return end(state.StatusFailed, "the agent's turn failed: "+textutil.Headline(line, 200), obs, nil)
		}
		if clock.Now().After(deadline) || ctxtime.Sleep(ctx, 20*time.Millisecond) != nil {
			return nil
		}
	}
}

// lateAnswerWait bounds lateAnswer: past it the screen's answer is taken.
const lateAnswerWait = 3 * time.Second
