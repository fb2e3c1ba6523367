package changes

import (
	"context"
	"errors"
	"testing"

	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// scriptedPanes answers Pane and ShowOption with the next of its replies
// (the last one again when they run out), and counts the calls.
type scriptedPanes struct {
	panes   []paneReply
	option  string
	optErr  error
	asked   int
	options int
}

type paneReply struct {
	info tmuxctl.PaneInfo
	err  error
}

func (s *scriptedPanes) Pane(context.Context, string) (tmuxctl.PaneInfo, error) {
	r := s.panes[min(s.asked, len(s.panes)-1)]
	s.asked++
	return r.info, r.err
}

func (s *scriptedPanes) ShowOption(context.Context, string, string) (string, error) {
	s.options++
	return s.option, s.optErr
}

// TestPaneAlive: only tmux's word that the pane is gone, dead or another
// task's makes it not alive; a server that cannot be asked is asked three
// times and then counts as alive (a message to a gone pane fails with a
// reason, one never posted is lost).
func TestPaneAlive(t *testing.T) {
	slow := errors.New("tmux: server not responding")
	mine := tmuxctl.PaneInfo{WindowName: "t_aaaaaaaa"}
	renamed := tmuxctl.PaneInfo{WindowName: "✳ Claude Code"}
	for _, tc := range []struct {
		name  string
		s     *scriptedPanes
		want  bool
		asked int
	}{
		{"its window", &scriptedPanes{panes: []paneReply{{info: mine}}}, true, 1},
		{"dead", &scriptedPanes{panes: []paneReply{{info: tmuxctl.PaneInfo{Dead: true, WindowName: "t_aaaaaaaa"}}}}, false, 1},
		{"gone", &scriptedPanes{panes: []paneReply{{err: tmuxctl.ErrNotFound}}}, false, 1},
		{"dead, says tmux", &scriptedPanes{panes: []paneReply{{err: tmuxctl.ErrPaneDead}}}, false, 1},
		{"renamed, its option", &scriptedPanes{panes: []paneReply{{info: renamed}}, option: "t_aaaaaaaa"}, true, 1},
		{"renamed, another task's", &scriptedPanes{panes: []paneReply{{info: renamed}}, option: "t_bbbbbbbb"}, false, 1},
		{"renamed, no option: gone", &scriptedPanes{panes: []paneReply{{info: renamed}}, optErr: tmuxctl.ErrNotFound}, false, 1},
		{"slow, then its window", &scriptedPanes{panes: []paneReply{{err: slow}, {info: mine}}}, true, 2},
		{"slow, then gone", &scriptedPanes{panes: []paneReply{{err: slow}, {err: slow}, {err: tmuxctl.ErrNotFound}}}, false, 3},
		{"slow each time", &scriptedPanes{panes: []paneReply{{err: slow}}}, true, 3},
		{"its option slow each time", &scriptedPanes{panes: []paneReply{{info: renamed}}, optErr: slow}, true, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Deps{PaneClient: func(context.Context, *state.Task) (Panes, error) { return tc.s, nil }}
			task := &state.Task{ID: "t_aaaaaaaa", Tmux: state.TmuxTarget{Pane: "%3"}}
			if got := d.PaneAlive(t.Context(), task); got != tc.want || tc.s.asked != tc.asked {
				t.Errorf("PaneAlive = %v after %d asks; want %v after %d", got, tc.s.asked, tc.want, tc.asked)
			}
		})
	}
	d := Deps{PaneClient: func(context.Context, *state.Task) (Panes, error) { return nil, errors.New("host h1 unreachable") }}
	if !d.PaneAlive(t.Context(), &state.Task{ID: "t_a", Tmux: state.TmuxTarget{Pane: "%1", Host: "h1"}}) {
		t.Error("a pane whose server cannot be reached counted as gone")
	}
	if d.PaneAlive(t.Context(), &state.Task{ID: "t_a"}) {
		t.Error("a task without a pane counted as alive")
	}
}
