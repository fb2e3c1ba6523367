package watch

import (
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/runner-cli/runner/state"
)

func TestFirstLoadSelectsAndMarksWithoutBell(t *testing.T) {
	f := newFixture(t)
	if !f.m.loaded || f.m.sel == "" {
		t.Fatalf("after the first load: loaded %v, selected %q", f.m.loaded, f.m.sel)
	}
	if f.bell.Len() != 0 {
		t.Error("the bell rang for a task that needed input before the view started")
	}
	if f.m.sel != "t_ask" && !f.m.marked["t_ask"] {
		t.Error("t_ask needs input and is neither selected nor marked")
	}
}

func TestBellRingsOnceWhenATaskAsks(t *testing.T) {
	f := newFixture(t)
	f.store.st = sampleState()
	f.store.st.Tasks["t_run"].Status = state.StatusNeedsInput
	f.load(t)
	f.load(t) // still asking: no second bell
	if f.bell.String() != "\a" {
		t.Errorf("bell = %q, want one BEL", f.bell.String())
	}
	if f.m.sel != "t_run" && !f.m.marked["t_run"] {
		t.Error("the task that asks is not marked")
	}
	f.store.st = sampleState() // t_run runs again: forgotten, may ring again
	f.load(t)
	if f.m.asked["t_run"] || f.m.marked["t_run"] {
		t.Error("a task running again is still marked as asking")
	}
}

func TestLoadErrorShownThenCleared(t *testing.T) {
	f := newFixture(t)
	f.store.readErr = errors.New("state.json: unexpected end of JSON input")
	f.load(t)
	if !strings.Contains(f.m.render(), "state: state.json: unexpected end") {
		t.Errorf("a corrupt state is not shown:\n%s", f.m.render())
	}
	if len(f.m.rows) == 0 {
		t.Error("the rows of the last good read were dropped")
	}
	f.store.readErr = nil
	f.load(t)
	if f.m.err != nil || strings.Contains(f.m.render(), "state:") {
		t.Error("the error stays after a good read")
	}
}

func TestNewFailsWithoutWatch(t *testing.T) {
	_, err := New(t.Context(), Options{Deps: Deps{Store: &fakeStore{watchErr: errors.New("inotify: too many watches")}}})
	if err == nil || !strings.Contains(err.Error(), "too many watches") {
		t.Errorf("err = %v", err)
	}
	if err := Run(t.Context(), Options{Deps: Deps{Store: &fakeStore{watchErr: errors.New("no watch")}}}); err == nil || !strings.HasPrefix(err.Error(), "watch: ") {
		t.Errorf("Run: err = %v", err)
	}
}

func TestMoveSelection(t *testing.T) {
	f := newFixture(t)
	var ids []string
	for _, r := range f.m.rows {
		if r.Task != nil {
			ids = append(ids, r.Task.ID)
		}
	}
	if len(ids) != 3 {
		t.Fatalf("rows %v, want 3 tasks", ids)
	}
	f.press("G")
	if f.m.sel != ids[2] {
		t.Errorf("G: selected %q, want the last %q", f.m.sel, ids[2])
	}
	f.press("j") // past the end: stays
	if f.m.sel != ids[2] {
		t.Errorf("j at the end: selected %q", f.m.sel)
	}
	f.press("k")
	if f.m.sel != ids[1] {
		t.Errorf("k: selected %q, want %q", f.m.sel, ids[1])
	}
	f.press("g")
	if f.m.sel != ids[0] {
		t.Errorf("g: selected %q, want %q", f.m.sel, ids[0])
	}
	f.press("down")
	if f.m.sel != ids[1] {
		t.Errorf("down: selected %q, want %q", f.m.sel, ids[1])
	}
	f.m.Update(tea.WindowSizeMsg{Width: 60, Height: 6})
	if f.m.w != 60 || f.m.listHeight() < 1 {
		t.Errorf("resize: w %d, list height %d", f.m.w, f.m.listHeight())
	}
}

func TestSelectionFollowsItsTask(t *testing.T) {
	f := newFixture(t)
	f.m.sel = "t_done"
	delete(f.store.st.Tasks, "t_run")
	f.load(t)
	if f.m.sel != "t_done" {
		t.Errorf("selected %q after another task went, want t_done", f.m.sel)
	}
	delete(f.store.st.Tasks, "t_done")
	f.load(t)
	if f.m.sel != "t_ask" {
		t.Errorf("selected %q after the selected task went, want the one left", f.m.sel)
	}
}

func TestQuitKeys(t *testing.T) {
	f := newFixture(t)
	for _, k := range []string{"q", "ctrl+c"} {
		cmd := f.press(k)
		if cmd == nil {
			t.Fatalf("%s: no command", k)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Errorf("%s does not quit", k)
		}
	}
}

func TestHelpAndFilter(t *testing.T) {
	f := newFixture(t)
	f.press("?")
	if f.m.mode != modeHelp || !strings.Contains(f.m.render(), "help") {
		t.Errorf("? does not show the help")
	}
	f.press("x")
	if f.m.mode != modeList {
		t.Error("a key does not leave the help")
	}
	f.press("/", "d", "o", "n")
	if f.m.opts.Filter.Text != "don" || f.m.mode != modeInput {
		t.Errorf("typing a filter: %q, mode %v", f.m.opts.Filter.Text, f.m.mode)
	}
	f.press("enter")
	if f.m.mode != modeList || f.m.sel != "t_done" || len(f.m.rows) != 2 {
		t.Errorf("filter /don: mode %v, selected %q, %d rows; want t_done alone", f.m.mode, f.m.sel, len(f.m.rows))
	}
	if !strings.Contains(f.m.render(), "filter /don") {
		t.Error("the filter is not shown")
	}
	f.press("esc")
	if f.m.opts.Filter.Text != "" || len(f.m.rows) != 4 {
		t.Errorf("esc: filter %q, %d rows", f.m.opts.Filter.Text, len(f.m.rows))
	}
	f.press("/", "z", "z", "z", "enter")
	if !strings.Contains(f.m.render(), "no task matches /zzz") {
		t.Errorf("a filter nothing matches:\n%s", f.m.render())
	}
}

func TestReconcileOnTheClock(t *testing.T) {
	f := newFixture(t)
	f.m.Init()
	start := f.m.lastReconcile
	f.now = t0.Add(ReconcileEvery - time.Second)
	f.m.Update(clockMsg(f.now))
	if !f.m.lastReconcile.Equal(start) {
		t.Error("reconciled before ReconcileEvery")
	}
	f.now = t0.Add(ReconcileEvery)
	f.m.Update(clockMsg(f.now))
	if !f.m.lastReconcile.Equal(f.now) {
		t.Error("not reconciled after ReconcileEvery")
	}
}

func TestUntilAgeChanges(t *testing.T) {
	for _, c := range []struct{ d, want time.Duration }{
		{-time.Second, time.Second},
		{90 * time.Second, 30*time.Second + time.Millisecond},
		{90 * time.Minute, 30*time.Minute + time.Millisecond},
		{50 * time.Hour, 22*time.Hour + time.Millisecond},
	} {
		if got := untilAgeChanges(c.d); got != c.want {
			t.Errorf("untilAgeChanges(%v) = %v, want %v", c.d, got, c.want)
		}
	}
	if age(t0, t0.Add(-30*time.Second)) != "<1m" {
		t.Error("an age under a minute is not <1m")
	}
}
