package messaging

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/state"
)

func askState() *state.State {
	st := state.New()
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, tk := range []struct{ id, parent string }{
		{"t_pppppppp", ""}, {"t_c1c1c1c1", "t_pppppppp"}, {"t_c2c2c2c2", "t_pppppppp"},
		{"t_c3c3c3c3", "t_pppppppp"}, {"t_rrrrrrrr", ""}, {"t_ffffffff", ""}, {"t_xxxxxxxx", ""},
	} {
		s := state.StatusRunning
		switch tk.id {
		case "t_c3c3c3c3", "t_ffffffff":
			s = state.StatusDone
		case "t_xxxxxxxx":
			s = state.StatusQueued
		}
		st.Tasks[tk.id] = &state.Task{ID: tk.id, Parent: tk.parent, Status: s, Agent: "sim", Dir: "/p",
			Created: base.Add(time.Duration(i) * time.Second)}
	}
	return st
}

func TestAskTargets(t *testing.T) {
	for _, tc := range []struct {
		name    string
		caller  string
		refs    []string
		want    []string // task ids in order
		wantErr string   // substring of a usage error
	}{
		{name: "ids and prefixes in argument order", refs: []string{"t_rrrrrrrr", "c1c1"}, want: []string{"t_rrrrrrrr", "t_c1c1c1c1"}},
		{name: "a finished task by id", refs: []string{"t_ffffffff"}, want: []string{"t_ffffffff"}},
		{name: "duplicates once", refs: []string{"t_c2c2c2c2", "c2", "@siblings"}, caller: "t_c1c1c1c1", want: []string{"t_c2c2c2c2"}},
		{name: "siblings: same parent, active, not the caller", caller: "t_c1c1c1c1", refs: []string{"@siblings"}, want: []string{"t_c2c2c2c2"}},
		{name: "all: active, not the caller, oldest first", caller: "t_c1c1c1c1", refs: []string{"@all"},
			want: []string{"t_pppppppp", "t_c2c2c2c2", "t_rrrrrrrr", "t_xxxxxxxx"}},
		{name: "all from outside a task", refs: []string{"@all"},
			want: []string{"t_pppppppp", "t_c1c1c1c1", "t_c2c2c2c2", "t_rrrrrrrr", "t_xxxxxxxx"}},
		{name: "siblings outside a task", refs: []string{"@siblings"}, wantErr: "not inside a task (RUNNER_TASK_ID is not set)"},
		{name: "siblings of a root task", caller: "t_pppppppp", refs: []string{"@siblings"}, wantErr: "has no siblings"},
		{name: "siblings of an unknown caller", caller: "t_gonegone", refs: []string{"@siblings"}, wantErr: "is not in the state"},
		{name: "asking oneself", caller: "t_c1c1c1c1", refs: []string{"c1c1"}, wantErr: "cannot ask itself"},
		{name: "unknown id", refs: []string{"t_nope"}, wantErr: `no task matches "t_nope"`},
		{name: "ambiguous prefix", refs: []string{"c"}, wantErr: "c"},
		{name: "unknown @ target", refs: []string{"@parent"}, wantErr: `unknown target "@parent"`},
		{name: "no targets", refs: nil, wantErr: "no target"},
		{name: "a bad target among good ones", refs: []string{"t_rrrrrrrr", "@nobody"}, wantErr: "@nobody"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AskTargets(askState(), tc.caller, tc.refs)
			if tc.wantErr != "" || tc.want == nil {
				if err == nil || !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want a usage error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, tk := range got {
				ids = append(ids, tk.ID)
			}
			if !slices.Equal(ids, tc.want) {
				t.Errorf("targets %v, want %v", ids, tc.want)
			}
		})
	}
}

func TestAskTargetsNoActiveSiblings(t *testing.T) {
	st := askState()
	st.Tasks["t_c2c2c2c2"].Status = state.StatusFailed
	_, err := AskTargets(st, "t_c1c1c1c1", []string{"@siblings"})
	if !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "no active siblings") {
		t.Fatalf("err = %v", err)
	}
	for id, tk := range st.Tasks {
		if id != "t_c1c1c1c1" {
			tk.Status = state.StatusDone
		}
	}
	_, err = AskTargets(st, "t_c1c1c1c1", []string{"@all"})
	if !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "no active task") {
		t.Fatalf("err = %v", err)
	}
}
