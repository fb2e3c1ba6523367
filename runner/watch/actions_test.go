package watch

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/state"
)

func TestSendAsksThenRuns(t *testing.T) {
	f := newFixture(t)
	f.m.sel = "t_run"
	f.press("s")
	if f.m.mode != modeInput || !strings.Contains(f.m.render(), "send to t_run: ") {
		t.Fatalf("s: mode %v, screen:\n%s", f.m.mode, f.m.render())
	}
	cmd := f.press("h", "i", "enter")
	msg := f.do(t, cmd).(doneMsg)
	if msg.err != nil || !strings.HasPrefix(msg.out, "ran send --detach -- t_run hi\n") {
		t.Errorf("send ran %q, %v", msg.out, msg.err)
	}
	if f.m.status != "send t_run: ran send --detach -- t_run hi" || f.m.statusErr {
		t.Errorf("status %q (error %v), want the output's first line", f.m.status, f.m.statusErr)
	}
}

func TestEmptyInputIsNotDone(t *testing.T) {
	f := newFixture(t)
	f.m.sel = "t_run"
	if cmd := f.press("m", "enter"); cmd != nil {
		t.Error("an empty message ran something")
	}
	if !f.m.statusErr || !strings.Contains(f.m.status, "message to t_run: empty: not done") || f.m.mode != modeList {
		t.Errorf("status %q, mode %v", f.m.status, f.m.mode)
	}
	f.press("m", "x", "esc")
	if f.m.status != "not done" || f.m.mode != modeList {
		t.Errorf("esc: status %q, mode %v", f.m.status, f.m.mode)
	}
}

func TestCancelConfirmsAndShowsTheFailure(t *testing.T) {
	f := newFixture(t)
	f.m.sel = "t_run"
	f.press("c")
	if f.m.mode != modeConfirm || !strings.Contains(f.m.status, "cancel t_run? (y/n)") {
		t.Fatalf("c: mode %v, status %q", f.m.mode, f.m.status)
	}
	if cmd := f.press("n"); cmd != nil || f.m.status != "not done" {
		t.Errorf("n: status %q", f.m.status)
	}
	f.press("c")
	msg := f.do(t, f.press("y")).(doneMsg)
	if msg.err == nil || msg.err.Error() != "exit 3: task t_run is not yours" {
		t.Errorf("a failed cancel: err %v, want its exit code and stderr's last line", msg.err)
	}
	if !f.m.statusErr || !strings.Contains(f.m.status, "cancel t_run: exit 3") {
		t.Errorf("status %q", f.m.status)
	}
}

func TestKillRunsCancelKill(t *testing.T) {
	f := newFixture(t)
	f.m.sel = "t_done"
	f.press("K")
	msg := f.do(t, f.press("Y")).(doneMsg)
	if !strings.HasPrefix(msg.out, "ran cancel --kill t_done") {
		t.Errorf("K ran %q", msg.out)
	}
}

func TestNewDispatchFillsProjectAndAgent(t *testing.T) {
	f := newFixture(t)
	f.m.sel = "t_run"
	f.press("n")
	if f.m.input.Value() != "api" {
		t.Errorf("project prefilled %q, want api", f.m.input.Value())
	}
	f.press("enter")
	if f.m.input.Value() != "sim" {
		t.Errorf("agent prefilled %q, want sim", f.m.input.Value())
	}
	msg := f.do(t, f.press("enter", "f", "i", "x", "enter")).(doneMsg)
	if !strings.HasPrefix(msg.out, "ran dispatch --detach --agent sim -- api fix") {
		t.Errorf("dispatch ran %q", msg.out)
	}
}

func TestMissingBinaryIsAnError(t *testing.T) {
	msg := run(t.Context(), "/nonexistent/runner", "diff t_x", tabDiff, "t_x", "diff", "t_x")().(doneMsg)
	if msg.err == nil || msg.tab != tabDiff || msg.id != "t_x" {
		t.Errorf("run of a missing binary = %+v", msg)
	}
}

func TestDiffAndLogsTabs(t *testing.T) {
	f := newFixture(t)
	f.m.sel = "t_done"
	cmd := f.press("d")
	if f.m.tab != tabDiff || !strings.Contains(f.m.preview, "running runner diff t_done") {
		t.Errorf("d: tab %v, preview %q", f.m.tab, f.m.preview)
	}
	f.do(t, cmd)
	if !strings.HasPrefix(f.m.preview, "ran diff t_done") {
		t.Errorf("the diff tab shows %q", f.m.preview)
	}
	f.do(t, f.press("l"))
	if f.m.tab != tabLogs || !strings.HasPrefix(f.m.preview, "ran logs t_done") {
		t.Errorf("l: tab %v, preview %q", f.m.tab, f.m.preview)
	}
	f.press("l")
	if f.m.tab != tabPane {
		t.Errorf("l again: tab %v, want the pane", f.m.tab)
	}
	// A diff that comes back for a task no longer selected is dropped.
	f.m.tab = tabDiff
	f.m.Update(doneMsg{what: "diff t_run", out: "stale", tab: tabDiff, id: "t_run"})
	if f.m.preview == "stale" {
		t.Error("a late diff of another task was shown")
	}
}

func TestPreviewCapturesThePane(t *testing.T) {
	f := newFixture(t)
	// The first load's capture never ran: none is under way.
	f.m.sel, f.m.capturing, f.m.captureDue, f.m.lastCapture = "t_run", false, false, t0.Add(-time.Second)
	cmd := f.m.refreshPreview()
	msg := f.do(t, cmd).(previewMsg)
	if msg.pane != "%1" || f.m.preview != "agent screen" || f.m.previewPane != "%1" {
		t.Errorf("preview %q of %q", f.m.preview, msg.pane)
	}
	// Another capture at once is held back until previewEvery passed.
	if cmd := f.m.requestCapture(); cmd == nil || !f.m.captureDue {
		t.Error("a capture right after one was not held back")
	}
	if cmd := f.m.requestCapture(); cmd != nil {
		t.Error("a second held-back capture asked for another tick")
	}
	if f.screen.n != 1 {
		t.Errorf("%d captures, want 1", f.screen.n)
	}
}

func TestPreviewOfADeadPaneOrAGoneHost(t *testing.T) {
	f := newFixture(t)
	f.m.sel, f.m.previewID = "t_run", "t_run"
	f.screen.err = errors.New("can't find pane: %1")
	f.do(t, f.m.feed.capture(t.Context(), f.m.selected()))
	if f.m.preview != "(can't find pane: %1)" {
		t.Errorf("a dead pane's preview: %q", f.m.preview)
	}
	far := &state.Task{ID: "t_run", Tmux: state.TmuxTarget{Host: "gone", Pane: "%1"}}
	f.do(t, f.m.feed.capture(t.Context(), far))
	if f.m.preview != "(host gone: unreachable)" {
		t.Errorf("a host that does not answer: %q", f.m.preview)
	}
}

func TestAttach(t *testing.T) {
	f := newFixture(t)
	f.m.sel = "t_done"
	if cmd := f.press("enter"); cmd != nil || !f.m.statusErr || !strings.Contains(f.m.status, "it has no pane") {
		t.Errorf("enter on a task without a pane: status %q", f.m.status)
	}

	// Inside a client of runner's own server: switch-client.
	getenv := func(k string) string {
		if k == "TMUX" {
			return "/tmp/runner.sock,123,0"
		}
		return ""
	}
	run := f.store.st.Tasks["t_run"]
	msg := attach(t.Context(), f.m.opts.Deps, getenv, run)().(attachedMsg)
	if msg.err != nil || msg.pane != "%1" || f.tc.commands[len(f.tc.commands)-1] != "switch-client -t %1" {
		t.Errorf("attach inside: %+v, commands %q", msg, f.tc.commands)
	}
	f.m.Update(msg)
	if !strings.Contains(f.m.status, "your tmux client shows %1 now") {
		t.Errorf("status %q", f.m.status)
	}

	// A dead pane.
	f.tc.dead["%1"] = true
	msg = attach(t.Context(), f.m.opts.Deps, getenv, run)().(attachedMsg)
	if msg.err == nil || !strings.Contains(msg.err.Error(), "can't find pane") {
		t.Errorf("attach to a dead pane: %+v", msg)
	}
	f.m.Update(msg)
	if !f.m.statusErr || !strings.HasPrefix(f.m.status, "attach: can't find pane") {
		t.Errorf("status %q", f.m.status)
	}

	// A host that does not answer.
	far := &state.Task{ID: "t_far", Tmux: state.TmuxTarget{Host: "gone", Pane: "%3"}}
	msg = attach(t.Context(), f.m.opts.Deps, getenv, far)().(attachedMsg)
	if msg.err == nil || !strings.Contains(msg.err.Error(), "unreachable") {
		t.Errorf("attach on a gone host: %+v", msg)
	}
	f.m.Update(attachedMsg{})
	if f.m.status != "back from the pane" {
		t.Errorf("status %q", f.m.status)
	}
}

func TestSameServer(t *testing.T) {
	tc := &fakeTmux{socket: "/tmp/runner.sock"}
	ctx := context.Background()
	for _, c := range []struct {
		env  string
		want bool
	}{
		{"", false},
		{"/tmp/runner.sock,1,0", true},
		{"/tmp/tmux-1000/default,1,0", false},
	} {
		if got := sameServer(ctx, tc, c.env); got != c.want {
			t.Errorf("sameServer(%q) = %v", c.env, got)
		}
	}
}

func TestPopupOutsideTmux(t *testing.T) {
	err := Popup(t.Context(), func(string) string { return "" }, nil, "runner", nil)
	if err == nil || !strings.Contains(err.Error(), "not inside tmux") {
		t.Errorf("err = %v", err)
	}
}

func TestGroupKeyOnATaskOfNoGroup(t *testing.T) {
	f := newFixture(t)
	f.m.sel = "t_run"
	f.press("e")
	if !f.m.statusErr || !strings.Contains(f.m.status, "not a candidate of a group") {
		t.Errorf("status %q", f.m.status)
	}
	f.press("r")
	if f.m.status != "reloaded" {
		t.Errorf("r: status %q", f.m.status)
	}
}
