package importcheck

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCmdFamiliesTestRatio holds each package under cmd/runner/internal
// (cmdkit and the command families: tmuxcmd, statecmd, snapshotcmd,
// hostcmd, agentscmd), a new one too, to minTestRatio, as TestTestRatio
// holds runner/'s.
func TestCmdFamiliesTestRatio(t *testing.T) {
	root := "../../cmd/runner/internal"
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if code, _ := TestLines(t, filepath.Join(root, e.Name())); code > 0 {
			TooFewTests(t, filepath.Join(root, e.Name()), minTestRatio)
			n++
		}
	}
	if n < 6 {
		t.Fatalf("only %d packages under %s: not cmd/runner's families?", n, root)
	}
}

// TestExitCodesAtEdgeFamilies holds the packages under cmd/runner/internal
// to what TestExitCodesAtEdge holds every package below cmd/runner to
// (its walk leaves cmd/runner's whole folder out): no Exit… constant, no
// os.Exit, none of main's exit codes written as a number. A family
// returns an error of a kind and package main maps it.
func TestExitCodesAtEdgeFamilies(t *testing.T) {
	if n := ExitCodesAtEdge(t, "../../cmd/runner/internal", ".."); n < 12 {
		t.Fatalf("only %d files checked under cmd/runner/internal", n)
	}
}
