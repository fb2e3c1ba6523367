package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/monitor"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// The supervisor's decisions, driven by recorded sequences: each step is
// what the monitor reports for the goal the supervisor waits for, built
// from real screens of real CLIs (profile/testdata/screens-real). The
// fakes record what the supervisor did: keys, pastes, and the record.

// step is one observation the monitor reports, for the goal the
// supervisor must be waiting for.
type step struct {
	goal monitor.Goal
	obs  monitor.Observation
	err  error
}

// watcher replays steps; a wait for another goal, or past the end, fails
// the test.
type watcher struct {
	t      *testing.T
	steps  []step
	hook   *profile.HookEvent // WaitHook's answer
	match  profile.TurnMatch
	events int64
	file   string // the events file (EventsFile)
	// hookNow is HookNow's answer: a turn's hook already come.
	hookNow *profile.HookEvent
}

func (w *watcher) Wait(ctx context.Context, goal monitor.Goal, since time.Time) (monitor.Observation, error) {
	if len(w.steps) == 0 {
		w.t.Fatalf("unexpected wait for goal %d: the recorded sequence is over", goal)
	}
	s := w.steps[0]
	w.steps = w.steps[1:]
	if s.goal != goal {
		w.t.Fatalf("waited for goal %d, the recording has goal %d next", goal, s.goal)
	}
	if s.err == errUntilDone {
		<-ctx.Done()
		return s.obs, ctx.Err()
	}
	return s.obs, s.err
}

// errUntilDone makes a step a wait that nothing ends but its context.
var errUntilDone = errors.New("wait until the context is done")

func (w *watcher) WaitHook(ctx context.Context, d time.Duration) *profile.HookEvent { return w.hook }
func (w *watcher) HookNow() *profile.HookEvent                                      { return w.hookNow }
func (w *watcher) Written() (<-chan struct{}, func())                               { return nil, func() {} }
func (w *watcher) Expect(m profile.TurnMatch)                                       { w.match = m }
func (w *watcher) Expecting() profile.TurnMatch                                     { return w.match }
func (w *watcher) EventsOffset() int64                                              { return w.events }
func (w *watcher) EventsFile() string                                               { return w.file }
func (w *watcher) Held(d time.Duration) Watcher                                     { return w }

// pane records what the supervisor does to the pane. Deliver shows the
// accept check each of delivered (confirmed once one is accepted), after
// handing Before the screen; CaptureScreen returns screen.
type pane struct {
	keys      []string
	pastes    []string
	delivered []string
	screen    string
	// onKeys, if set, changes the screen as the keys sent would.
	onKeys func(keys string) string
}

func (p *pane) CaptureScreen(ctx context.Context, id string) (string, error) { return p.screen, nil }
func (p *pane) Capture(ctx context.Context, id string, o tmuxctl.CaptureOptions) (string, error) {
	return p.screen, nil
}
func (p *pane) SendKeys(ctx context.Context, id string, keys ...string) error {
	p.keys = append(p.keys, strings.Join(keys, "+"))
	if p.onKeys != nil {
		p.screen = p.onKeys(strings.Join(keys, "+"))
	}
	return nil
}
func (p *pane) Deliver(ctx context.Context, id, text string, o tmuxctl.DeliverOptions) (tmuxctl.Delivery, error) {
	if o.Before != nil {
		o.Before(p.screen) // the screen before the paste, as tmuxctl does
	}
	p.pastes = append(p.pastes, text)
	for i, screen := range p.delivered {
		if o.Accepted(screen) {
			return tmuxctl.Delivery{Confirmed: true, Enters: i + 1}, nil
		}
	}
	return tmuxctl.Delivery{Enters: len(p.delivered), Reason: "the screen did not change"}, nil
}

// book is the task's record in memory, with a log of what was recorded.
type book struct {
	task     state.Task
	log      []string // "status: reason", "journal kind: text"
	notified int
	budgeted bool
	live     *liveLog // LiveSpend's readings
}

// liveLog keeps LiveSpend's readings, which come from watchLive's
// goroutine.
type liveLog struct {
	mu     sync.Mutex
	got    []state.Spend
	judged []bool // whether LiveSpend was to judge each reading
}

func (l *liveLog) all() []state.Spend {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.got)
}

func (l *liveLog) judges() []bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.judged)
}

func (b *book) Task(ctx context.Context) (*state.Task, error) { c := b.task; return &c, nil }
func (b *book) Update(ctx context.Context, fn func(*state.Task)) error {
	fn(&b.task)
	return nil
}
func (b *book) SetStatus(ctx context.Context, st state.Status, reason string, fn func(*state.Task)) error {
	if fn != nil {
		fn(&b.task)
	}
	b.task.Status = st
	b.log = append(b.log, string(st)+": "+reason)
	return nil
}
func (b *book) Journal(ctx context.Context, kind, text string) {
	b.log = append(b.log, "journal "+kind+": "+text)
}
func (b *book) Say(format string, args ...any)            {}
func (b *book) Notify(ctx context.Context, t *state.Task) { b.notified++ }
func (b *book) Now() time.Time                            { return clock.Now() }
func (b *book) Pending(ctx context.Context) int           { return 0 }
func (b *book) Budgeted(ctx context.Context) bool         { return b.budgeted }
func (b *book) LiveSpend(ctx context.Context, sp state.Spend, judge bool) {
	b.live.mu.Lock()
	defer b.live.mu.Unlock()
	b.live.got = append(b.live.got, sp)
	b.live.judged = append(b.live.judged, judge)
}
func (b *book) Prompt(ctx context.Context, text string, first bool, ready *Ready) (string, *state.Task, error) {
	if ready != nil && b.task.Status == state.StatusStarting {
		b.task.Status = state.StatusReady
		b.log = append(b.log, "ready: "+ready.Reason+" (with the prompt)")
	}
	c := b.task
	return text, &c, nil
}

// screen reads a real screen of a real CLI.
func screen(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "profile", "testdata", "screens-real", name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// seen is what the monitor reports on a real screen.
func seen(t *testing.T, p *profile.Profile, name string) monitor.Observation {
	s := screen(t, name)
	return monitor.Observation{Screen: s, Detection: profile.Detect(p, s), Via: "screen"}
}

func newSupervisor(t *testing.T, cli string, set Settings, steps ...step) (*Supervisor, *pane, *book, *watcher) {
	p, err := profile.BuiltinProfile(cli)
	if err != nil {
		t.Fatal(err)
	}
	pn, b, w := &pane{}, &book{task: state.Task{ID: "t_test", Status: state.StatusStarting}, live: &liveLog{}}, &watcher{t: t, steps: steps}
	return &Supervisor{ID: "t_test", Profile: p, PaneID: "%1", TC: pn, Mon: w, Book: b, Settings: set}, pn, b, w
}

// ended is the outcome a phase ended with, or a failure.
func ended(t *testing.T, err error) Outcome {
	t.Helper()
	var e *Ended
	if !errors.As(err, &e) {
		t.Fatalf("phase ended with %v, want an outcome", err)
	}
	return e.Outcome
}

func TestWaitReady(t *testing.T) {
	claude, _ := profile.BuiltinProfile("claude")
	trust := seen(t, claude, "claude__needs_input__2")
	ready := seen(t, claude, "claude__ready__1")
	t.Run("trust accepted on --yes-trust, then ready", func(t *testing.T) {
		s, pn, b, w := newSupervisor(t, "claude", Settings{YesTrust: true},
			step{monitor.GoalReady, trust, nil}, step{monitor.GoalLeaveInput, ready, nil}, step{monitor.GoalReady, ready, nil})
		if err := s.WaitReady(t.Context()); err != nil {
			t.Fatal(err)
		}
		if want := strings.Join(trust.Detection.TrustKeys, "+"); len(pn.keys) != 1 || pn.keys[0] != want {
			t.Errorf("keys %q, want the trust keys %q once", pn.keys, want)
		}
		if b.task.Status != state.StatusReady || !strings.HasPrefix(b.log[0], "journal auto-answer: accepted a trust dialog") {
			t.Errorf("record %q, status %s", b.log, b.task.Status)
		}
		if len(w.steps) != 0 {
			t.Errorf("%d steps left", len(w.steps))
		}
	})
	t.Run("trust without --yes-trust: needs input, nothing pressed", func(t *testing.T) {
		s, pn, b, _ := newSupervisor(t, "claude", Settings{}, step{monitor.GoalReady, trust, nil})
		o := ended(t, s.WaitReady(t.Context()))
		if o.Status != state.StatusNeedsInput || len(pn.keys) != 0 || b.notified != 1 {
			t.Errorf("outcome %s (%s), keys %q, notified %d", o.Status, o.Reason, pn.keys, b.notified)
		}
		if !strings.Contains(b.log[0], "Quick safety check") || b.task.Question == "" {
			t.Errorf("record %q, question %q: the record must say what the agent asks", b.log, b.task.Question)
		}
	})
	t.Run("the agent exits", func(t *testing.T) {
		s, _, _, _ := newSupervisor(t, "claude", Settings{}, step{monitor.GoalReady, monitor.Observation{Dead: true, Status: 127}, nil})
		o := ended(t, s.WaitReady(t.Context()))
		if o.Status != state.StatusExited || o.Code == nil || *o.Code != 127 {
			t.Errorf("outcome %+v", o)
		}
	})
	t.Run("the ready time runs out", func(t *testing.T) {
		s, _, _, _ := newSupervisor(t, "claude", Settings{ReadyTimeout: time.Millisecond}, step{monitor.GoalReady, monitor.Observation{}, errUntilDone})
		busy := busyMachine
		t.Cleanup(func() { busyMachine = busy })
		busyMachine = func() string { return loadNote(37.5, 2) }
		o := ended(t, s.WaitReady(t.Context()))
		if o.Status != state.StatusTimeout || !strings.Contains(o.Reason, "--ready-timeout") ||
			!strings.Contains(o.Reason, "overloaded (load average 37.5 on 2 CPUs)") {
			t.Errorf("outcome %s (%s)", o.Status, o.Reason)
		}
	})
	t.Run("pi with no model configured: failed at start, nothing delivered", func(t *testing.T) {
		pi, _ := profile.BuiltinProfile("pi")
		for _, name := range []string{"pi__error__nomodels1", "pi-0.73.1__error__nomodels-node22"} {
			s, pn, b, _ := newSupervisor(t, "pi", Settings{}, step{monitor.GoalReady, seen(t, pi, name), nil})
			o := ended(t, s.WaitReady(t.Context()))
			if o.Status != state.StatusFailed || !strings.Contains(o.Reason, "pi cannot answer a prompt: Warning: No models available") ||
				b.task.Status == state.StatusReady || len(pn.keys) != 0 {
				t.Errorf("%s: outcome %s (%s), record %s, keys %q; want failed before delivery", name, o.Status, o.Reason, b.task.Status, pn.keys)
			}
		}
		// A pi that is set up, or that shows a turn's error (a resumed
		// session), is ready.
		for _, name := range []string{"pi__ready__1", "pi__error__resumed3", "pi-0.73.1__ready__after-download"} {
			s, _, b, _ := newSupervisor(t, "pi", Settings{}, step{monitor.GoalReady, seen(t, pi, name), nil})
			if err := s.WaitReady(t.Context()); err != nil || b.task.Status != state.StatusReady {
				t.Errorf("%s: %v, record %s; want ready", name, err, b.task.Status)
			}
		}
	})
	t.Run("a tmux call's own deadline is not the ready time", func(t *testing.T) {
		s, _, _, _ := newSupervisor(t, "claude", Settings{}, step{monitor.GoalReady, monitor.Observation{}, fmt.Errorf("tmux capture-pane: %w", context.DeadlineExceeded)})
		if err := s.WaitReady(t.Context()); err == nil || strings.Contains(err.Error(), "ready-timeout") {
			t.Errorf("error %v, want the tmux call's", err)
		}
	})
}

func TestMonitorTurn(t *testing.T) {
	claude, _ := profile.BuiltinProfile("claude")
	busy := seen(t, claude, "claude__busy__1")
	approval := seen(t, claude, "claude__needs_input__1")
	done := seen(t, claude, "claude__ready__1")
	done.SawBusy = true
	createRule := []*regexp.Regexp{regexp.MustCompile(`^Do you want to create \w+\.txt`)}
	for _, tc := range []struct {
		name   string
		set    Settings
		steps  []step
		keys   []string
		status state.Status
		reason string
	}{
		{"approval answered by a rule", Settings{Approve: createRule},
			[]step{{monitor.GoalTurnEnd, approval, nil}, {monitor.GoalLeaveInput, busy, nil}, {monitor.GoalTurnEnd, done, nil}},
			[]string{"Enter"}, state.StatusDone, "the agent finished its turn (screen, rule ready[0] at claude.toml:"},
		{"approval no rule matches: left to the user", Settings{Approve: []*regexp.Regexp{regexp.MustCompile(`^rm `)}},
			[]step{{monitor.GoalTurnEnd, approval, nil}},
			nil, state.StatusNeedsInput, "Do you want to create hello.txt?"},
		{"the agent's error screen", Settings{},
			[]step{{monitor.GoalTurnEnd, monitor.Observation{Via: "screen", Detection: profile.Detection{State: profile.StateError, Line: "API Error: 500\nmore"}}, nil}},
			nil, state.StatusFailed, "the agent reported an error: API Error: 500"},
		{"a command that exited non-zero", Settings{},
			[]step{{monitor.GoalTurnEnd, monitor.Observation{Via: "screen", Detection: profile.Detection{State: profile.StateReady, ExitStatus: ptr(2)}}, nil}},
			nil, state.StatusFailed, "the command exited with status 2"},
		{"the agent's hook ends the turn", Settings{UseHook: true},
			[]step{{monitor.GoalTurnEnd, monitor.Observation{Via: "hook", Hook: &profile.HookEvent{Answer: "42"}, Detection: profile.Detection{State: profile.StateReady}}, nil}},
			nil, state.StatusDone, "(hook)"},
		{"the pane died", Settings{},
			[]step{{monitor.GoalTurnEnd, monitor.Observation{Dead: true, Status: 1}, nil}},
			nil, state.StatusExited, "the agent exited with status 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, pn, _, w := newSupervisor(t, "claude", tc.set, tc.steps...)
			s.Mon.Expect(profile.TurnMatch{Since: clock.Now()})
			o := ended(t, s.MonitorTurn(t.Context(), clock.Now()))
			if o.Status != tc.status || !strings.Contains(o.Reason, tc.reason) {
				t.Errorf("outcome %s (%s), want %s (%s)", o.Status, o.Reason, tc.status, tc.reason)
			}
			if strings.Join(pn.keys, ",") != strings.Join(tc.keys, ",") {
				t.Errorf("keys %q, want %q", pn.keys, tc.keys)
			}
			if len(w.steps) != 0 {
				t.Errorf("%d steps left", len(w.steps))
			}
		})
	}
}

func ptr(n int) *int { return &n }

// A prompt that the agent left in its composer (Qwen queued it while it
// started, then drew it back unsent) gets two more Enters, never a second
// paste, and then the task fails saying so: never "done".
func TestPromptLeftInComposer(t *testing.T) {
	qwen, _ := profile.BuiltinProfile("qwen")
	inComposer := seen(t, qwen, "qwen__ready__1")
	noSign := step{monitor.GoalTurnStart, monitor.Observation{}, context.DeadlineExceeded}
	s, pn, b, w := newSupervisor(t, "qwen", Settings{},
		step{monitor.GoalTurnEnd, inComposer, nil}, noSign,
		step{monitor.GoalTurnEnd, inComposer, nil}, noSign,
		step{monitor.GoalTurnEnd, inComposer, nil})
	pn.delivered = []string{screen(t, "qwen__starting__2")} // no sign the agent took it
	pn.screen = screen(t, "qwen__starting__2")
	if err := s.Deliver(t.Context(), "Say hello. SAYTURN", true); err != nil {
		t.Fatal(err)
	}
	if b.task.Status != state.StatusRunning || !strings.Contains(b.task.Delivery, "not confirmed yet") {
		t.Fatalf("after delivery: %s, delivery %q", b.task.Status, b.task.Delivery)
	}
	o := ended(t, s.MonitorTurn(t.Context(), clock.Now()))
	if o.Status != state.StatusFailed || !strings.Contains(o.Reason, "still in the composer after 2 more Enter presses") {
		t.Errorf("outcome %s (%s)", o.Status, o.Reason)
	}
	if len(pn.pastes) != 1 || strings.Join(pn.keys, ",") != "Enter,Enter" {
		t.Errorf("pastes %d, keys %q: want one paste and two Enters", len(pn.pastes), pn.keys)
	}
	if len(b.task.Turns) != 2 || len(w.steps) != 0 {
		t.Errorf("turn notes %d (want the 2 Enters recorded), %d steps left", len(b.task.Turns), len(w.steps))
	}
}

// A delivery the agent visibly took (a busy screen) starts the turn: an
// idle screen after it ends the turn done.
func TestDeliverConfirmed(t *testing.T) {
	claude, _ := profile.BuiltinProfile("claude")
	s, pn, b, _ := newSupervisor(t, "claude", Settings{}, step{monitor.GoalTurnEnd, seen(t, claude, "claude__ready__1"), nil})
	pn.screen = screen(t, "claude__ready__2")
	pn.delivered = []string{screen(t, "claude__busy__1")}
	if err := s.Deliver(t.Context(), "write hello.txt", true); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.task.Delivery, "confirmed after 1 Enter") || s.Mon.Expecting().Signature != "write hello.txt" {
		t.Errorf("delivery %q, expecting %+v", b.task.Delivery, s.Mon.Expecting())
	}
	if o := ended(t, s.MonitorTurn(t.Context(), clock.Now())); o.Status != state.StatusDone {
		t.Errorf("outcome %s (%s)", o.Status, o.Reason)
	}
}

// TestReadyFoldedIntoTheDelivery: with FoldReady, WaitReady records
// nothing; the delivery that follows hands the ready status it found to
// Book.Prompt (one write for both), once.
func TestReadyFoldedIntoTheDelivery(t *testing.T) {
	claude, _ := profile.BuiltinProfile("claude")
	ready := seen(t, claude, "claude__ready__1")
	s, pn, b, _ := newSupervisor(t, "claude", Settings{}, step{monitor.GoalReady, ready, nil})
	s.FoldReady = true
	if err := s.WaitReady(t.Context()); err != nil {
		t.Fatal(err)
	}
	if b.task.Status != state.StatusStarting || len(b.log) != 0 {
		t.Fatalf("WaitReady recorded %q (status %s), want nothing yet", b.log, b.task.Status)
	}
	pn.screen = screen(t, "claude__ready__2")
	pn.delivered = []string{screen(t, "claude__busy__1")}
	if err := s.Deliver(t.Context(), "write hello.txt", true); err != nil {
		t.Fatal(err)
	}
	if len(b.log) < 2 || !strings.HasPrefix(b.log[0], "ready: the agent is ready") || !strings.HasSuffix(b.log[0], "(with the prompt)") || !strings.HasPrefix(b.log[1], "running: delivered") {
		t.Errorf("record %q, want ready with the prompt, then running", b.log)
	}
	if s.ready != nil {
		t.Errorf("the ready status is still held after the delivery")
	}
}

// A profile without markers cannot tell a turn from its screen: a prompt
// it did not visibly take fails at once rather than going on to done.
func TestDeliverUnconfirmedWithoutMarkers(t *testing.T) {
	s, pn, b, _ := newSupervisor(t, "claude", Settings{})
	s.Profile = &profile.Profile{Name: "bare"}
	pn.screen, pn.delivered = "$ ", []string{"$ "}
	o := ended(t, s.Deliver(t.Context(), "x", true))
	if o.Status != state.StatusFailed || !strings.HasPrefix(b.task.Delivery, "unconfirmed") {
		t.Errorf("outcome %s (%s), delivery %q", o.Status, o.Reason, b.task.Delivery)
	}
}

// ender is a book that also records the end of turns: more is what
// EndTurn finds queued.
type ender struct {
	book
	more      int
	cancelled bool // another process ended the task first
	committed bool
	// committedAtEnd: the commit was made when EndTurn recorded the end
	// (which lets go of the task: nothing of the turn may follow it).
	committedAtEnd bool
	tracked        int
	takeQueue      []bool
	spent          []state.Spend
	onEnd          func(TurnText) // called as EndTurn records the end
}

func (e *ender) TurnSpent(_ context.Context, sp state.Spend) { e.spent = append(e.spent, sp) }

func (e *ender) EndTurn(ctx context.Context, o Outcome, tt TurnText, takeQueue bool) (int, *state.Task) {
	e.takeQueue = append(e.takeQueue, takeQueue)
	e.committedAtEnd = e.committed
	if e.onEnd != nil {
		e.onEnd(tt)
	}
	if e.cancelled {
		return 0, nil
	}
	if takeQueue && o.Status == state.StatusDone && e.more > 0 {
		return e.more, nil
	}
	e.task.Status, e.task.Answer = o.Status, tt.Answer
	c := e.task
	return 0, &c
}
func (e *ender) Commit(ctx context.Context) { e.committed = true }
func (e *ender) Pending(ctx context.Context) int {
	if e.cancelled {
		return 0
	}
	return e.more
}
func (e *ender) LookAtChanges(ctx context.Context) func(context.Context) {
	return func(context.Context) { e.tracked++ }
}

// Conclude: what each outcome records, commits and notifies, and the exit
// it maps to.
func TestConclude(t *testing.T) {
	interrupted, stop := context.WithCancel(context.Background())
	stop()
	for _, tc := range []struct {
		name       string
		o          Outcome
		e          ender
		commit     bool
		parent     context.Context
		want       error // wrapped by the result; nil: nil
		committed  bool
		notified   int
		takeQueue  bool
		answerWant string
	}{
		{name: "done, commit on", o: Outcome{Status: state.StatusDone, Reason: "r"}, commit: true,
			committed: true, notified: 1, takeQueue: true},
		{name: "done, messages waiting: the next turn, no notification yet", o: Outcome{Status: state.StatusDone}, e: ender{more: 2},
			want: ErrMoreMessages, takeQueue: true},
		{name: "done, commit on, messages waiting: committed at the last turn's end", o: Outcome{Status: state.StatusDone}, e: ender{more: 1},
			commit: true, want: ErrMoreMessages, takeQueue: true},
		{name: "done, agent not at its prompt: queue kept", o: Outcome{Status: state.StatusDone, KeepQueue: true}, e: ender{more: 2},
			notified: 1},
		{name: "done while interrupted: queue left for the next supervisor", o: Outcome{Status: state.StatusDone}, e: ender{more: 2},
			parent: interrupted, notified: 1},
		{name: "failed: no commit", o: Outcome{Status: state.StatusFailed, Reason: "x"}, commit: true,
			want: ErrTaskFailed, notified: 1, takeQueue: true},
		{name: "exited", o: Outcome{Status: state.StatusExited, Reason: "x"}, want: ErrTaskFailed, notified: 1, takeQueue: true},
		{name: "timeout", o: Outcome{Status: state.StatusTimeout, Reason: "x"}, want: ErrTaskTimeout, notified: 1, takeQueue: true},
		{name: "cancelled by another process first: nothing notified", o: Outcome{Status: state.StatusFailed}, e: ender{cancelled: true},
			commit: true, want: ErrTaskFailed, takeQueue: true},
		{name: "needs input: recorded already, journaled", o: Outcome{Status: state.StatusNeedsInput, Reason: "Proceed?"},
			want: fault.ErrNeedsInput},
		{name: "the hook's answer is recorded", o: Outcome{Status: state.StatusDone, Obs: monitor.Observation{Hook: &profile.HookEvent{Answer: " 42 \n"}}},
			notified: 1, takeQueue: true, answerWant: "42"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _, _, _ := newSupervisor(t, "claude", Settings{Commit: tc.commit})
			parent := tc.parent
			if parent == nil {
				parent = t.Context()
			}
			e := tc.e
			err := s.Conclude(parent, &e, tc.o)
			if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Errorf("error %v, want one wrapping %v", err, tc.want)
			}
			if e.committed != tc.committed || e.notified != tc.notified {
				t.Errorf("committed %v notified %d; want %v, %d", e.committed, e.notified, tc.committed, tc.notified)
			}
			if e.committed && !e.committedAtEnd {
				t.Errorf("committed after the end was recorded: a merge or a new turn that follows wait would race it")
			}
			if tc.o.Status != state.StatusNeedsInput && (len(e.takeQueue) != 1 || e.takeQueue[0] != tc.takeQueue) {
				t.Errorf("EndTurn takeQueue %v, want [%v]", e.takeQueue, tc.takeQueue)
			}
			// The files are looked at whenever the end of the turn was
			// recorded (or messages wait), never for a question, nor when
			// another process ended the task first.
			wantTracked := 1
			if tc.o.Status == state.StatusNeedsInput || tc.e.cancelled {
				wantTracked = 0
			}
			if e.tracked != wantTracked {
				t.Errorf("TrackChanges ran %d times, want %d", e.tracked, wantTracked)
			}
			if tc.answerWant != "" && e.task.Answer != tc.answerWant {
				t.Errorf("answer %q, want %q", e.task.Answer, tc.answerWant)
			}
		})
	}
}

func TestLoadNote(t *testing.T) {
	for _, tc := range []struct {
		load float64
		cpus int
		busy bool
	}{
		{0.5, 2, false},
		{4.0, 2, false}, // twice the CPUs: busy, not overloaded
		{4.01, 2, true},
		{40, 32, false},
		{40, 0, false}, // CPUs unknown
	} {
		if got := loadNote(tc.load, tc.cpus); (got != "") != tc.busy {
			t.Errorf("loadNote(%v, %d) = %q, want busy %v", tc.load, tc.cpus, got, tc.busy)
		}
	}
}

// TestTrustChosenByLabel: Claude Code 2.1.332's folder dialog starts on
// "No, exit"; --yes-trust moves the cursor onto "Yes, I trust this folder"
// and checks it there before Enter (an Enter where it started would quit).
func TestTrustChosenByLabel(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "profile", "testdata", "screens-newest", name+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	onNo, onYes := read("claude-2.1.332__needs_input__trust-cursor-on-no"), read("claude-2.1.332__needs_input__trust-cursor-on-yes")
	sup, pn, b, _ := newSupervisor(t, "claude", Settings{YesTrust: true}, step{goal: monitor.GoalLeaveInput, obs: monitor.Observation{}})
	pn.screen = onNo
	pn.onKeys = func(keys string) string {
		if keys == "Down" && pn.screen == onNo {
			return onYes
		}
		return pn.screen
	}
	d := profile.Detect(sup.Profile, onNo)
	if err := sup.acceptTrust(t.Context(), t.Context(), d); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(pn.keys, " "); got != "Down Enter" {
		t.Errorf("keys %q, want \"Down Enter\" (log %q)", got, b.log)
	}
	// A cursor that never moves: an error, and no Enter.
	sup, pn, _, _ = newSupervisor(t, "claude", Settings{YesTrust: true})
	pn.screen = onNo
	if err := sup.acceptTrust(t.Context(), t.Context(), d); err == nil || strings.Contains(strings.Join(pn.keys, " "), "Enter") {
		t.Errorf("a stuck cursor: err %v, keys %q; want an error and no Enter", err, pn.keys)
	}
}

// An approval dialog that takes no Enter (Claude Code 2.1.332 drops one
// pressed as its dialog draws) gets its option chosen and Enter pressed
// again, while it is the same dialog; another screen is waited for as
// before, with no second Enter.
func TestApprovalPressedAgain(t *testing.T) {
	claude, err := profile.BuiltinProfile("claude")
	if err != nil {
		t.Fatal(err)
	}
	approval := seen(t, claude, "claude__needs_input__1")
	busy := seen(t, claude, "claude__busy__1")
	done := seen(t, claude, "claude__ready__1")
	done.SawBusy = true
	rule := []*regexp.Regexp{regexp.MustCompile(`^Do you want to create \w+\.txt`)}
	for _, tc := range []struct {
		name   string
		screen string // the pane after the first Enter
		keys   []string
	}{
		{"the same dialog: pressed again", approval.Screen, []string{"Enter", "Enter"}},
		{"another screen: waited for", busy.Screen, []string{"Enter"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, pn, b, _ := newSupervisor(t, "claude", Settings{Approve: rule},
				step{monitor.GoalTurnEnd, approval, nil},
				step{monitor.GoalLeaveInput, approval, context.DeadlineExceeded},
				step{monitor.GoalLeaveInput, busy, nil},
				step{monitor.GoalTurnEnd, done, nil})
			pn.screen = tc.screen
			s.Mon.Expect(profile.TurnMatch{Since: clock.Now()})
			o := ended(t, s.MonitorTurn(t.Context(), clock.Now()))
			if o.Status != state.StatusDone {
				t.Errorf("outcome %s (%s), want done", o.Status, o.Reason)
			}
			if strings.Join(pn.keys, ",") != strings.Join(tc.keys, ",") {
				t.Errorf("keys %q, want %q", pn.keys, tc.keys)
			}
			again := slices.ContainsFunc(b.log, func(l string) bool { return strings.Contains(l, "pressed again") })
			if again != (len(tc.keys) == 2) {
				t.Errorf("journal %q: 'pressed again' %v, want %v", b.log, again, len(tc.keys) == 2)
			}
		})
	}
}

// TestWaitReadyStarted: with Started, WaitReady looks at the agent first
// and waits for the start before it presses anything or records anything
// (a trust dialog is answered only after it); a start that fails ends the
// wait with its error, nothing pressed.
func TestWaitReadyStarted(t *testing.T) {
	claude, _ := profile.BuiltinProfile("claude")
	trust := seen(t, claude, "claude__needs_input__2")
	ready := seen(t, claude, "claude__ready__1")
	s, pn, b, _ := newSupervisor(t, "claude", Settings{YesTrust: true},
		step{monitor.GoalReady, trust, nil}, step{monitor.GoalLeaveInput, ready, nil}, step{monitor.GoalReady, ready, nil})
	var calls []string
	s.Started = func(context.Context) error {
		calls = append(calls, fmt.Sprintf("started (keys %d, records %d)", len(pn.keys), len(b.log)))
		return nil
	}
	if err := s.WaitReady(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(calls) == 0 || calls[0] != "started (keys 0, records 0)" || len(pn.keys) != 1 {
		t.Errorf("calls %q, keys %q: the start must be waited for before the trust keys", calls, pn.keys)
	}

	failed := errors.New("no snapshot")
	s, pn, b, _ = newSupervisor(t, "claude", Settings{YesTrust: true}, step{monitor.GoalReady, trust, nil})
	s.Started = func(context.Context) error { return failed }
	if err := s.WaitReady(t.Context()); !errors.Is(err, failed) || len(pn.keys) != 0 || len(b.log) != 0 {
		t.Errorf("WaitReady: %v, keys %q, records %q; want the start's error, nothing done", err, pn.keys, b.log)
	}
}

// TestWaitReadyFoldsTheStart: an agent found simply ready, whose ready
// status the first delivery records (FoldReady), has the record of its
// start asked as a change (StartChange) for that write, not waited for
// (Started); a trust dialog waits for the start instead.
func TestWaitReadyFoldsTheStart(t *testing.T) {
	claude, _ := profile.BuiltinProfile("claude")
	ready := seen(t, claude, "claude__ready__1")
	trust := seen(t, claude, "claude__needs_input__2")
	var asked []string
	change := func(*state.Task) error { return nil }
	setUp := func(s *Supervisor) {
		s.FoldReady = true
		s.Started = func(context.Context) error { asked = append(asked, "started"); return nil }
		s.StartChange = func(context.Context) (func(*state.Task) error, func(), error) {
			asked = append(asked, "change")
			return change, func() {}, nil
		}
	}
	s, _, b, _ := newSupervisor(t, "claude", Settings{}, step{monitor.GoalReady, ready, nil})
	setUp(s)
	if err := s.WaitReady(t.Context()); err != nil {
		t.Fatal(err)
	}
	if strings.Join(asked, " ") != "change" || s.ready == nil || s.ready.Start == nil || len(b.log) != 0 {
		t.Errorf("asked %q, ready %+v, records %q; want the start's change carried by the ready status", asked, s.ready, b.log)
	}

	asked = nil
	s, _, _, _ = newSupervisor(t, "claude", Settings{YesTrust: true},
		step{monitor.GoalReady, trust, nil}, step{monitor.GoalLeaveInput, ready, nil}, step{monitor.GoalReady, ready, nil})
	setUp(s)
	if err := s.WaitReady(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(asked) == 0 || asked[0] != "started" {
		t.Errorf("asked %q: a trust dialog is answered only after the start is recorded", asked)
	}
}
