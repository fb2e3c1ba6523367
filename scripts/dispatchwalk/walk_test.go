package main

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestCount: a return is a stop in a file left before, not the previous
// stop's; files are counted once.
func TestCount(t *testing.T) {
	for _, tc := range []struct {
		files            []string
		nFiles, nReturns int
	}{
		{nil, 0, 0},
		{[]string{"a", "a", "b"}, 2, 0},
		{[]string{"a", "b", "a"}, 2, 1},
		{[]string{"a", "b", "a", "a", "b", "c", "a"}, 3, 3},
	} {
		var stops []Stop
		for _, f := range tc.files {
			stops = append(stops, Stop{File: f})
		}
		if w := count(stops); w.Files != tc.nFiles || w.Returns != tc.nReturns {
			t.Errorf("%v: %d files, %d returns; want %d, %d", tc.files, w.Files, w.Returns, tc.nFiles, tc.nReturns)
		}
	}
}

// Held are the numbers of the walk as the code holds them now (issue 55
// §7): a change that lengthens the walk fails TestDispatchWalk. Lower
// them as the walk gets shorter; the limits are Limits.
var Held = struct{ Stops, Files, Returns int }{17, 12, 4}

// TestDispatchWalk measures the walk of a default dispatch (a coverage
// build of runner, one dispatch of the sim agent: about a minute) and
// fails when it is over issue 55's Limits, or longer than Held.
func TestDispatchWalk(t *testing.T) {
	if testing.Short() {
		t.Skip("builds runner and runs a dispatch")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	w, err := Run(root, false, "", t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range w.Stops {
		t.Logf("%2d %s %s:%d", i+1, s.Func, s.File, s.Line)
	}
	t.Logf("%d stops in %d files, %d returns (the issue's limits: %d, %d, %d)", len(w.Stops), w.Files, w.Returns, len(Limits.Stops), Limits.Files, Limits.Returns)
	if len(w.Stops) > len(Limits.Stops) || w.Files > Limits.Files || w.Returns > Limits.Returns {
		t.Errorf("the walk of a dispatch is %d stops in %d files, %d returns: over issue 55's limits, %d, %d, %d", len(w.Stops), w.Files, w.Returns, len(Limits.Stops), Limits.Files, Limits.Returns)
	}
	if len(w.Stops) > Held.Stops || w.Files > Held.Files || w.Returns > Held.Returns {
		t.Errorf("the walk of a dispatch is %d stops in %d files, %d returns: more than the %d, %d, %d held", len(w.Stops), w.Files, w.Returns, Held.Stops, Held.Files, Held.Returns)
	}
}
