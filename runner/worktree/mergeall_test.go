package worktree

import (
	"slices"
	"testing"
	"time"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/state"
)

func TestMergeOrder(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// c makes a candidate t_<id>, ended at minute `ended`, conflicting with
	// the target (alone) or pairwise with the tasks named.
	c := func(id string, ended int, alone bool, with ...string) candidate {
		f := gitsnap.BranchForecast{Branch: "runner/t_" + id}
		if alone {
			f.Conflicts = []string{"x.go"}
		}
		for _, w := range with {
			f.With = append(f.With, gitsnap.PairConflict{Branch: "runner/t_" + w, Files: []string{"a.go"}})
		}
		return candidate{task: &state.Task{ID: "t_" + id, Ended: t0.Add(time.Duration(ended) * time.Minute)}, forecast: f}
	}
	for _, tc := range []struct {
		name  string
		cands []candidate
		want  []string
	}{
		{"all clean: oldest first", []candidate{c("b", 2, false), c("a", 1, false)}, []string{"t_a", "t_b"}},
		{"a pair: the clean ones, one of the pair, then the other",
			[]candidate{c("a", 1, false, "b"), c("b", 2, false, "a"), c("c", 3, false), c("d", 4, false)},
			[]string{"t_c", "t_d", "t_a", "t_b"}},
		{"one against two: the two go first, the one last",
			[]candidate{c("a", 1, false, "b", "c"), c("b", 2, false, "a"), c("c", 3, false, "a")},
			[]string{"t_b", "t_c", "t_a"}},
		{"a conflict with the target goes last", []candidate{c("a", 1, true), c("b", 2, false)}, []string{"t_b", "t_a"}},
		{"a conflict with a branch that is no candidate does not count",
			[]candidate{c("a", 1, false, "zz"), c("b", 2, false)}, []string{"t_a", "t_b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, x := range mergeOrder(tc.cands) {
				got = append(got, x.task.ID)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("order %v, want %v", got, tc.want)
			}
		})
	}
}

func TestOutlookString(t *testing.T) {
	for _, tc := range []struct {
		o    *Outlook
		want string
	}{
		{nil, "-"},
		{&Outlook{Clean: true}, "clean"},
		{&Outlook{UpToDate: true}, "merged"},
		{&Outlook{Conflicts: []string{"a.go"}}, "conflicts: a.go"},
		{&Outlook{With: []TaskConflict{{Task: "t_x", Branch: "runner/t_x", Files: []string{"a.go", "b.go"}}, {Branch: "runner/mine", Files: []string{"c"}}}},
			"conflicts with t_x (a.go, b.go); conflicts with runner/mine (c)"},
	} {
		if got := tc.o.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.o, got, tc.want)
		}
	}
}
