package overlap

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/state"
)

var now = time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)

func task(id string, st state.Status, branch string) *state.Task {
	return &state.Task{ID: id, Status: st, Branch: branch, Dir: "/src/api", Agent: "claude", Project: "api"}
}

func changes(files ...string) state.Changes {
	return state.Changes{Repo: "/src/api/.git", Files: files, Count: len(files), Time: now}
}

func newState(ts ...*state.Task) *state.State {
	st := &state.State{Tasks: map[string]*state.Task{}}
	for _, t := range ts {
		st.Tasks[t.ID] = t
	}
	return st
}

func tellsTo(tells []Tell) []string {
	var out []string
	for _, tl := range tells {
		out = append(out, tl.To+"<-"+tl.Other+":"+strings.Join(tl.New, ","))
	}
	return out
}

func TestRecordTellsBothSidesOncePerNewFile(t *testing.T) {
	a, b := task("t_aaaaaaaa", state.StatusRunning, "runner/t_aaaaaaaa"), task("t_bbbbbbbb", state.StatusRunning, "runner/t_bbbbbbbb")
	c := task("t_cccccccc", state.StatusRunning, "runner/t_cccccccc")
	st := newState(a, b, c)
	opts := Options{Now: now}

	if got := Record(st, a.ID, changes("a.go", "x.go"), opts); len(got) != 0 {
		t.Fatalf("the first task's changes told %q", tellsTo(got))
	}
	Record(st, c.ID, changes("c.go"), opts)
	got := Record(st, b.ID, changes("b.go", "x.go"), opts)
	want := []string{"t_bbbbbbbb<-t_aaaaaaaa:x.go", "t_aaaaaaaa<-t_bbbbbbbb:x.go"}
	if !slices.Equal(tellsTo(got), want) {
		t.Fatalf("tells %q, want %q", tellsTo(got), want)
	}
	if ov := a.OverlapWith(b.ID); ov == nil || !slices.Equal(ov.Files, []string{"x.go"}) {
		t.Fatalf("a's overlap with b: %+v", a.Overlaps)
	}
	if len(c.Overlaps) != 0 {
		t.Errorf("c has overlaps: %+v", c.Overlaps)
	}
	// Nothing new: nothing told, by either side's refresh.
	if got := Record(st, b.ID, changes("b.go", "x.go"), opts); len(got) != 0 {
		t.Errorf("a repeat told %q", tellsTo(got))
	}
	if got := Record(st, a.ID, changes("a.go", "x.go", "zz.go"), opts); len(got) != 0 {
		t.Errorf("a file of a's own told %q", tellsTo(got))
	}
	// A new shared file tells both again, naming the new one.
	got = Record(st, b.ID, changes("a.go", "b.go", "x.go"), opts)
	want = []string{"t_bbbbbbbb<-t_aaaaaaaa:a.go", "t_aaaaaaaa<-t_bbbbbbbb:a.go"}
	if !slices.Equal(tellsTo(got), want) {
		t.Fatalf("tells %q, want %q", tellsTo(got), want)
	}
	if !slices.Equal(got[0].Files, []string{"a.go", "x.go"}) {
		t.Errorf("the tell's files %q", got[0].Files)
	}
	// b reverts: the overlap goes on both sides.
	Record(st, b.ID, changes("b.go"), opts)
	if len(a.Overlaps)+len(b.Overlaps) != 0 {
		t.Errorf("overlaps left after a revert: %+v %+v", a.Overlaps, b.Overlaps)
	}
}

func TestRecordWhoCountsAndWhoIsTold(t *testing.T) {
	for _, tc := range []struct {
		name   string
		other  *state.Task
		och    state.Changes
		overl  bool   // an overlap is recorded
		toldTo string // the other side told ("" none)
	}{
		{"running worktree", task("t_oooooooo", state.StatusRunning, "runner/t_oooooooo"), changes("x.go"), true, "t_oooooooo"},
		{"done, unmerged branch: its idle agent is told", task("t_oooooooo", state.StatusDone, "runner/t_oooooooo"), changes("x.go"), true, "t_oooooooo"},
		{"failed, unmerged branch: recorded, not told", task("t_oooooooo", state.StatusFailed, "runner/t_oooooooo"), changes("x.go"), true, ""},
		{"merged branch", task("t_oooooooo", state.StatusDone, "runner/t_oooooooo"), func() state.Changes { c := changes("x.go"); c.Merged = now; return c }(), false, ""},
		{"finished in the shared tree", task("t_oooooooo", state.StatusDone, ""), changes("x.go"), false, ""},
		{"another repository", task("t_oooooooo", state.StatusRunning, "runner/t_oooooooo"), state.Changes{Repo: "/src/web/.git", Files: []string{"x.go"}}, false, ""},
		{"same repository on a host", task("t_oooooooo", state.StatusRunning, "runner/t_oooooooo"), state.Changes{Repo: "/src/api/.git", Host: "box", Files: []string{"x.go"}}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			self := task("t_ssssssss", state.StatusRunning, "runner/t_ssssssss")
			o := tc.other
			o.Changes = &tc.och
			st := newState(self, o)
			tells := Record(st, self.ID, changes("x.go"), Options{Now: now})
			if got := self.OverlapWith(o.ID) != nil; got != tc.overl {
				t.Errorf("overlap recorded: %v, want %v", got, tc.overl)
			}
			var toOther string
			for _, tl := range tells {
				if tl.To == o.ID {
					toOther = tl.To
				}
			}
			if toOther != tc.toldTo {
				t.Errorf("told %q, want %q", tellsTo(tells), tc.toldTo)
			}
		})
	}
}

func TestSharedTreeTasksDoNotOverlapEachOther(t *testing.T) {
	a, b := task("t_aaaaaaaa", state.StatusRunning, ""), task("t_bbbbbbbb", state.StatusRunning, "")
	w := task("t_wwwwwwww", state.StatusRunning, "runner/t_wwwwwwww")
	st := newState(a, b, w)
	shared := changes("x.go")
	shared.Shared = true
	Record(st, a.ID, shared, Options{Now: now})
	Record(st, w.ID, changes("x.go"), Options{Now: now})
	got := Record(st, b.ID, shared, Options{Now: now})
	if a.OverlapWith(b.ID) != nil || b.OverlapWith(a.ID) != nil {
		t.Errorf("two tasks of one shared tree overlap: %+v", a.Overlaps)
	}
	if b.OverlapWith(w.ID) == nil || w.OverlapWith(b.ID) == nil {
		t.Errorf("a shared tree and a worktree do not overlap: %+v %+v", b.Overlaps, w.Overlaps)
	}
	if want := []string{"t_bbbbbbbb<-t_wwwwwwww:x.go", "t_wwwwwwww<-t_bbbbbbbb:x.go"}; !slices.Equal(tellsTo(got), want) {
		t.Errorf("tells %q, want %q", tellsTo(got), want)
	}
}

func TestQuietTasksAreRecordedNotTold(t *testing.T) {
	a, b := task("t_aaaaaaaa", state.StatusRunning, "runner/t_aaaaaaaa"), task("t_bbbbbbbb", state.StatusRunning, "runner/t_bbbbbbbb")
	st := newState(a, b)
	opts := Options{Now: now, Quiet: func(t *state.Task) bool { return t.ID == a.ID }}
	Record(st, a.ID, changes("x.go"), opts)
	got := Record(st, b.ID, changes("x.go"), opts)
	if want := []string{"t_bbbbbbbb<-t_aaaaaaaa:x.go"}; !slices.Equal(tellsTo(got), want) {
		t.Errorf("tells %q, want %q", tellsTo(got), want)
	}
	if a.OverlapWith(b.ID) == nil {
		t.Error("the quiet task's overlap is not recorded")
	}
}

func TestForgetAMergedTask(t *testing.T) {
	a, b := task("t_aaaaaaaa", state.StatusDone, "runner/t_aaaaaaaa"), task("t_bbbbbbbb", state.StatusRunning, "runner/t_bbbbbbbb")
	st := newState(a, b)
	Record(st, a.ID, changes("x.go"), Options{Now: now})
	Record(st, b.ID, changes("x.go"), Options{Now: now})
	Forget(st, a.ID, now)
	if len(a.Overlaps)+len(b.Overlaps) != 0 || a.Changes.Merged.IsZero() {
		t.Fatalf("after Forget: %+v %+v %+v", a.Overlaps, b.Overlaps, a.Changes)
	}
	if got := Record(st, b.ID, changes("x.go", "y.go"), Options{Now: now}); len(got) != 0 || len(b.Overlaps) != 0 {
		t.Errorf("a merged task still overlaps: %q %+v", tellsTo(got), b.Overlaps)
	}
}

func TestTextNamesTheOtherTaskTheFilesAndTheWay(t *testing.T) {
	o := task("t_oooooooo", state.StatusRunning, "runner/t_oooooooo")
	txt := Text(Tell{To: "t_ssssssss", Other: o.ID, Files: []string{"a.go", "x.go"}, New: []string{"x.go"}}, o)
	for _, want := range []string{"Task t_oooooooo", "x.go", "runner msg t_oooooooo", "branch runner/t_oooooooo", "2 files: a.go, x.go"} {
		if !strings.Contains(txt, want) {
			t.Errorf("%q lacks %q", txt, want)
		}
	}
	many := make([]string, 20)
	for i := range many {
		many[i] = string(rune('a'+i)) + ".go"
	}
	if got := Names(many); !strings.HasSuffix(got, "and 12 more") {
		t.Errorf("Names: %q", got)
	}
}
