package answer

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/dialog"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
)

// simPane is the sim's ask dialog in a pane: Up and Down move the cursor,
// Enter answers (the dialog goes), and every Enter is counted.
type simPane struct {
	mu       sync.Mutex
	question string
	sel      int
	answered bool
	enters   int
	keys     []string
	// onCapture, if set, runs before each capture (a dialog that changes
	// between the reads).
	onCapture func(p *simPane, n int)
	captures  int
}

func (p *simPane) CaptureScreen(ctx context.Context, pane string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.captures++
	if p.onCapture != nil {
		p.onCapture(p, p.captures)
	}
	if p.answered {
		return "> ask\nanswered\n\n╭────╮\n│ > \n╰────╯\n", nil
	}
	mark := [2]string{"  ", "  "}
	mark[p.sel] = "❯ "
	return "> ask\n" + p.question + "\n" + mark[0] + "1. Yes\n" + mark[1] + "2. No\n", nil
}

func (p *simPane) SendKeys(ctx context.Context, pane string, keys ...string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, k := range keys {
		p.keys = append(p.keys, k)
		switch k {
		case "Up":
			p.sel = 0
		case "Down":
			p.sel = 1
		case "Enter":
			p.enters++
			p.answered = true
		}
	}
	return nil
}

// setup makes a store holding one needs_input task on a sim pane.
func setup(t *testing.T, pane *simPane) (Deps, string, string) {
	t.Helper()
	store, err := state.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	id := "t_answer0001"
	if err := store.Update(t.Context(), func(st *state.State) error {
		st.Tasks[id] = &state.Task{ID: id, Dir: "/d", Agent: "sim", Status: state.StatusNeedsInput, Created: clock.Now(),
			Tmux: state.TmuxTarget{Pane: "%1"}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sim, err := profile.BuiltinProfile("sim")
	if err != nil {
		t.Fatal(err)
	}
	screen, _ := pane.CaptureScreen(t.Context(), "%1")
	pane.captures = 0
	dlg, ok := dialog.Read(sim, screen)
	if !ok {
		t.Fatalf("no dialog on %q", screen)
	}
	d := Deps{Store: store, Agent: fakeAgent{pane: pane, prof: sim}}
	return d, id, dlg.Digest
}

// fakeAgent is an Agent whose pane and profile are these (or fail).
type fakeAgent struct {
	pane             Pane
	prof             *profile.Profile
	paneErr, profErr error
}

func (a fakeAgent) Pane(context.Context, *state.Task) (Pane, error) { return a.pane, a.paneErr }

func (a fakeAgent) Profile(*state.Task) (*profile.Profile, error) { return a.prof, a.profErr }

// TestSameOpAtOnce: requests with the same op at the same time press
// once; every one gets the first receipt.
func TestSameOpAtOnce(t *testing.T) {
	pane := &simPane{question: "Ship it?"}
	d, id, digest := setup(t, pane)
	const n = 8
	var wg sync.WaitGroup
	rcs := make([]Receipt, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			rcs[i], errs[i] = Answer(t.Context(), d, Request{Task: id, Option: "2", Digest: digest, Op: "op-same", By: "t"})
		})
	}
	wg.Wait()
	dups := 0
	for i := range n {
		if errs[i] != nil {
			t.Errorf("request %d: %v", i, errs[i])
		}
		if rcs[i].Result != state.AnswerPressed || rcs[i].Label != "No" {
			t.Errorf("request %d: receipt %+v", i, rcs[i])
		}
		if rcs[i].Duplicate {
			dups++
		}
	}
	if pane.enters != 1 || dups != n-1 {
		t.Fatalf("%d Enters, %d duplicates; want 1 and %d (keys %v)", pane.enters, dups, n-1, pane.keys)
	}
	x, err := d.Store.ReadTask(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Answers) != 1 || x.Answers[0].Result != state.AnswerPressed || x.Answers[0].Op != "op-same" {
		t.Fatalf("receipts %+v", x.Answers)
	}
}

// TestOtherOpsAtOnce: different ops at once on one dialog: one presses,
// the others are refused (another answer is pressing, or the dialog has
// gone), never a second Enter.
func TestOtherOpsAtOnce(t *testing.T) {
	pane := &simPane{question: "Ship it?"}
	d, id, digest := setup(t, pane)
	var wg sync.WaitGroup
	var mu sync.Mutex
	pressed := 0
	for i := range 6 {
		wg.Go(func() {
			_, err := Answer(t.Context(), d, Request{Task: id, Option: "1", Digest: digest, Op: "op-" + string(rune('a'+i))})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				pressed++
			case !errors.Is(err, ErrStale) || !errors.Is(err, fault.ErrBusy):
				t.Errorf("op %d: %v, want a refusal (ErrStale)", i, err)
			}
		})
	}
	wg.Wait()
	if pane.enters != 1 || pressed != 1 {
		t.Fatalf("%d Enters, %d pressed; want 1", pane.enters, pressed)
	}
}

// TestChangedBeforeEnter: a dialog that changes while the cursor moves
// is refused before Enter; the reservation is dropped, so the op may be
// tried again.
func TestChangedBeforeEnter(t *testing.T) {
	pane := &simPane{question: "Ship it?"}
	d, id, digest := setup(t, pane)
	pane.onCapture = func(p *simPane, n int) {
		if n >= 2 { // after the first read, another question
			p.question = "Delete everything?"
		}
	}
	_, err := Answer(t.Context(), d, Request{Task: id, Option: "2", Digest: digest, Op: "op-1"})
	if !errors.Is(err, ErrStale) {
		t.Fatalf("err %v, want ErrStale", err)
	}
	if pane.enters != 0 {
		t.Fatalf("Enter pressed on a changed dialog (keys %v)", pane.keys)
	}
	x, _ := d.Store.ReadTask(t.Context(), id)
	if len(x.Answers) != 0 {
		t.Fatalf("a refused answer left receipts %+v", x.Answers)
	}
}

// TestRefusals: bad input and a task not waiting press nothing.
func TestRefusals(t *testing.T) {
	pane := &simPane{question: "Ship it?"}
	d, id, digest := setup(t, pane)
	for _, tc := range []struct {
		r    Request
		want error
	}{
		{Request{Task: id, Option: "1"}, fault.ErrUsage},
		{Request{Task: id, Option: "3", Digest: digest}, fault.ErrUsage},
		{Request{Task: id, Option: "1", Digest: digest, Op: "bad op"}, fault.ErrUsage},
		{Request{Task: "t_nosuchtask", Option: "1", Digest: digest}, fault.ErrUsage},
		{Request{Task: id, Option: "1", Digest: "0123456789abcdef"}, ErrStale},
	} {
		if _, err := Answer(t.Context(), d, tc.r); !errors.Is(err, tc.want) {
			t.Errorf("%+v: %v, want %v", tc.r, err, tc.want)
		}
	}
	if err := d.Store.Update(t.Context(), func(st *state.State) error {
		return st.Task(id).SetStatus(state.StatusDone, clock.Now(), "done")
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := Answer(t.Context(), d, Request{Task: id, Option: "1", Digest: digest}); !errors.Is(err, ErrStale) {
		t.Errorf("a done task: %v, want ErrStale", err)
	}
	if len(pane.keys) != 0 {
		t.Fatalf("keys pressed: %v", pane.keys)
	}
}

// answerEvents reads the answer events of the store's event stream.
func answerEvents(t *testing.T, store *state.Store) []state.StreamEvent {
	t.Helper()
	var out []state.StreamEvent
	if _, err := store.ReadEvents(0, func(line []byte) bool {
		ev, err := state.ParseEvent(line)
		if err != nil {
			t.Fatalf("event %q: %v", line, err)
		}
		if ev.Type == state.EventAnswer {
			out = append(out, ev)
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAnswerEvents: each answer pressed or refused is one event on the
// stream with its receipt (option, digest, op, by, result); a duplicate
// adds none.
func TestAnswerEvents(t *testing.T) {
	pane := &simPane{question: "Ship it?"}
	d, id, digest := setup(t, pane)
	ctx := t.Context()
	if _, err := Answer(ctx, d, Request{Task: id, Option: "1", Digest: "0123456789abcdef", Op: "op-stale", By: "phone"}); !errors.Is(err, ErrStale) {
		t.Fatalf("a stale digest: %v", err)
	}
	if _, err := Answer(ctx, d, Request{Task: id, Option: "2", Digest: digest, Op: "op-ok", By: "phone"}); err != nil {
		t.Fatal(err)
	}
	if rc, err := Answer(ctx, d, Request{Task: id, Option: "2", Digest: digest, Op: "op-ok", By: "phone"}); err != nil || !rc.Duplicate {
		t.Fatalf("the same op again: %+v, %v", rc, err)
	}
	if err := d.Store.Update(ctx, func(st *state.State) error {
		return st.Task(id).SetStatus(state.StatusDone, clock.Now(), "done")
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := Answer(ctx, d, Request{Task: id, Option: "1", Digest: digest, Op: "op-late"}); !errors.Is(err, ErrStale) {
		t.Fatalf("a done task: %v", err)
	}
	evs := answerEvents(t, d.Store.(*state.Store))
	want := []struct{ op, option, status, by, reason string }{
		{"op-stale", "1", state.AnswerRefused, "phone", "the dialog changed"},
		{"op-ok", "2", state.AnswerPressed, "phone", ""},
		{"op-late", "1", state.AnswerRefused, "", "is done, not waiting"},
	}
	if len(evs) != len(want) {
		t.Fatalf("%d answer events, want %d: %+v", len(evs), len(want), evs)
	}
	for i, w := range want {
		ev := evs[i]
		if ev.Task != id || ev.Op != w.op || ev.Option != w.option || ev.Status != w.status || ev.By != w.by ||
			!strings.Contains(ev.Reason, w.reason) || (w.reason == "") != (ev.Reason == "") || ev.Cursor == 0 {
			t.Errorf("event %d: %+v, want %+v", i, ev, w)
		}
		if wantDigest := digest; w.op == "op-stale" {
			wantDigest = "0123456789abcdef"
			if ev.Digest != wantDigest {
				t.Errorf("event %d: digest %q, want %q", i, ev.Digest, wantDigest)
			}
		} else if ev.Digest != wantDigest {
			t.Errorf("event %d: digest %q, want %q", i, ev.Digest, wantDigest)
		}
	}
	if evs[1].Label != "No" {
		t.Errorf("the pressed event's label %q, want No", evs[1].Label)
	}
}
