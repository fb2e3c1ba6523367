// Dialogs during a supervision: trust and first-run dialogs, approvals
// answered by rules, and questions left to the user.

package supervisor

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/monitor"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// acceptTrust answers a trust or first-run dialog (--yes-trust) with the
// profile's keys, journals it, and waits (within wctx) until it is gone.
func (s *Supervisor) acceptTrust(ctx, wctx context.Context, d profile.Detection) error {
	s.Book.Journal(ctx, "auto-answer", "accepted a trust dialog (--yes-trust): "+d.Question)
	_ = s.Book.Update(ctx, func(t *state.Task) {
		t.AddTurn(s.Book.Now(), "auto-accepted (--yes-trust): "+dialogLine(s.Profile, d.Question))
	})
	s.Book.Say("task %s: accepting the trust dialog (--yes-trust)", s.ID)
	if err := s.choose(ctx, d.TrustChoose); err != nil {
		return err
	}
	if err := s.TC.SendKeys(ctx, s.PaneID, d.TrustKeys...); err != nil {
		return err
	}
	_, err := s.Mon.Wait(wctx, monitor.GoalLeaveInput, clock.Now())
	return err
}

// needsInput records a question; without WaitInput (and on a terminal) it
// ends the supervision (needs_input, exit 4), else it waits until the
// question is answered.
func (s *Supervisor) needsInput(ctx context.Context, d profile.Detection, obs monitor.Observation) error {
	q := d.Question
	if q == "" {
		q = d.Line
	}
	if err := s.Book.SetStatus(ctx, state.StatusNeedsInput, "the agent asks: "+dialogLine(s.Profile, q), func(t *state.Task) {
		t.Question = q
		t.ResultTail = tailLines(obs.Screen, 15)
	}); err != nil {
		return err
	}
	if t, _ := s.Book.Task(ctx); t != nil {
		s.Book.Notify(ctx, t)
	}
	if !s.Settings.WaitInput && !s.Settings.Detached {
		return end(state.StatusNeedsInput, q, obs, nil)
	}
	s.Book.Say("task %s needs input: %s (answer with 'runner attach %s')", s.ID, dialogLine(s.Profile, q), s.ID)
	if _, err := s.Mon.Wait(ctx, monitor.GoalLeaveInput, clock.Now()); err != nil {
		return err
	}
	return s.Book.SetStatus(ctx, state.StatusRunning, "the question was answered", func(t *state.Task) { t.Question = "" })
}

// dialog handles a dialog shown during a turn: a trust or first-run dialog
// (Codex shows its folder dialog seconds after start-up, with the prompt
// queued behind it) as before ready; an approval (it belongs to the turn)
// answered by a matching approve rule, else left to the user.
func (s *Supervisor) dialog(ctx context.Context, d profile.Detection, obs monitor.Observation) error {
	if len(d.TrustKeys) > 0 {
		if s.Settings.YesTrust {
			if err := s.acceptTrust(ctx, ctx, d); err != nil {
				return err
			}
		} else if err := s.needsInput(ctx, d, obs); err != nil {
			return err
		}
		s.graceFrom = clock.Now()
		if s.unstarted {
			if screen, err := s.TC.CaptureScreen(ctx, s.PaneID); err == nil {
				s.echoBase = echoCount(s.Profile, screen, s.sig)
			}
		}
		return nil
	}
	s.unstarted = false
	rule := matchRule(s.Settings.Approve, d.Question+"\n"+d.Line)
	if rule == "" {
		return s.needsInput(ctx, d, obs)
	}
	s.Book.Journal(ctx, "auto-answer", fmt.Sprintf("approved (rule %q): %s", rule, d.Question))
	_ = s.Book.Update(ctx, func(t *state.Task) {
		t.AddTurn(s.Book.Now(), "auto-approved: "+dialogLine(s.Profile, d.Question))
	})
	return s.answerDialog(ctx, d)
}

// answerDialog selects the approving option and presses Enter, then waits
// for the dialog to go. A dialog that is still there, the same, after
// dialogNudgeAfter took no Enter (Claude Code 2.1.332 drops one pressed as
// its dialog draws): the option is chosen again and Enter pressed again,
// at most dialogNudges times, never onto another dialog.
func (s *Supervisor) answerDialog(ctx context.Context, d profile.Detection) error {
	for try := 0; ; try++ {
		if err := s.choose(ctx, s.Profile.ApproveChoose); err != nil {
			return err
		}
		if err := s.TC.SendKeys(ctx, s.PaneID, "Enter"); err != nil {
			return err
		}
		wctx, cancel := context.WithTimeout(ctx, dialogNudgeAfter)
		_, err := s.Mon.Wait(wctx, monitor.GoalLeaveInput, clock.Now())
		cancel()
		if err == nil || ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		screen, cerr := s.TC.CaptureScreen(ctx, s.PaneID)
		if cerr != nil {
			return cerr
		}
		now := profile.Detect(s.Profile, screen)
		if try >= dialogNudges || now.State != profile.StateNeedsInput || now.Line != d.Line {
			// Another screen (or the last try): wait for it as before.
			_, err = s.Mon.Wait(ctx, monitor.GoalLeaveInput, clock.Now())
			return err
		}
		s.Book.Journal(ctx, "auto-answer", fmt.Sprintf("the dialog took no Enter in %s: chosen and pressed again", dialogNudgeAfter))
	}
}

// limitDialog reports whether the dialog on screen is the CLI's own on a
// usage limit that the profile knows how to stop (LimitChoose), and its
// line: a Limited line among the screen's last limitDialogLines lines
// (the dialog's title is above its menu, which alone is the question).
func (s *Supervisor) limitDialog(screen string) (string, bool) {
	if s.Profile.LimitChoose == "" {
		return "", false
	}
	lines := strings.Split(strings.TrimRight(tmuxctl.StripEscapes(screen), "\n "), "\n")
	if len(lines) > limitDialogLines {
		lines = lines[len(lines)-limitDialogLines:]
	}
	line, ok := s.Profile.LimitLine(strings.Join(lines, "\n"))
	return strings.Trim(line, "│ "), ok
}

// limitDialogLines is how far up the screen limitDialog looks.
const limitDialogLines = 30

// stopLimitDialog answers the CLI's limit dialog d with its "stop" option
// (LimitChoose) and waits for the dialog to go: the turn then ends
// limited, and runner decides what follows (--on-limit), not the CLI (it
// would switch to another model).
func (s *Supervisor) stopLimitDialog(ctx context.Context, d profile.Detection) error {
	if err := s.choose(ctx, s.Profile.LimitChoose); err != nil {
		return err
	}
	if err := s.TC.SendKeys(ctx, s.PaneID, "Enter"); err != nil {
		return err
	}
	s.Book.Journal(ctx, "auto-answer", "stopped at the usage limit: "+dialogLine(s.Profile, d.Question))
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := s.Mon.Wait(wctx, monitor.GoalLeaveInput, clock.Now())
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("task %s: the usage-limit dialog did not go after choosing its stop option (answer it with 'runner attach %s')", s.ID, s.ID)
	}
	return err
}

// dialogNudgeAfter and dialogNudges bound answerDialog's second tries.
const (
	dialogNudgeAfter = 3 * time.Second
	dialogNudges     = 2
)

// chooseRounds bounds the moves made to select a dialog's option.
const chooseRounds = 4

// choose selects the dialog option whose line matches label (see
// profile.MenuMove): Down or Up as many times as the screen says, then the
// screen again, until the cursor is on it. A label or cursor not on the
// screen leaves the dialog as it is (its keys are pressed as they stand);
// a cursor that will not reach the label is an error, never an Enter on
// another option.
func (s *Supervisor) choose(ctx context.Context, label string) error {
	if label == "" {
		return nil
	}
	for range chooseRounds {
		screen, err := s.TC.CaptureScreen(ctx, s.PaneID)
		if err != nil {
			return err
		}
		moves, ok := profile.MenuMove(s.Profile, screen, label)
		if !ok || moves == 0 {
			return nil
		}
		key := "Down"
		if moves < 0 {
			key, moves = "Up", -moves
		}
		keys := make([]string, moves)
		for i := range keys {
			keys[i] = key
		}
		if err := s.TC.SendKeys(ctx, s.PaneID, keys...); err != nil {
			return err
		}
		s.Book.Journal(ctx, "auto-answer", fmt.Sprintf("moved the dialog's cursor %s ×%d to the option %q", key, moves, label))
		// The dialog redraws its cursor: wait for the screen to change.
		for deadline := clock.Now().Add(2 * time.Second); clock.Now().Before(deadline); {
			if now, err := s.TC.CaptureScreen(ctx, s.PaneID); err != nil || now != screen {
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(30 * time.Millisecond):
			}
		}
	}
	return fmt.Errorf("task %s: the dialog's cursor did not reach the option %q after %d tries (answer it with 'runner attach %s')", s.ID, label, chooseRounds, s.ID)
}

// dialogLine is the line of a dialog that asks (profile.DialogLine).
func dialogLine(p *profile.Profile, q string) string { return profile.DialogLine(p, q) }

// matchRule returns the first rule that matches the dialog's text as a
// whole or any one of its lines (so an anchored rule such as ^Create works
// when the agent printed something above its question); "" when none does.
func matchRule(rules []*regexp.Regexp, text string) string {
	lines := strings.Split(text, "\n")
	for _, r := range rules {
		if r.MatchString(text) {
			return r.String()
		}
		for _, l := range lines {
			if r.MatchString(strings.TrimSpace(l)) {
				return r.String()
			}
		}
	}
	return ""
}
