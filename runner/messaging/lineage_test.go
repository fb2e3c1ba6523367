package messaging

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/state"
)

func lineageState() *state.State {
	st := state.New()
	at := func(m int) time.Time { return awNow.Add(time.Duration(m) * time.Minute) }
	for _, t := range []*state.Task{
		{ID: "t_root0001", Agent: "sim", Status: state.StatusRunning, Level: 1, Text: "root", Created: at(0)},
		{ID: "t_kid00002", Parent: "t_root0001", Agent: "sim", Status: state.StatusDone, Level: 2, Text: "second", Created: at(2), Answer: "42"},
		{ID: "t_kid00001", Parent: "t_root0001", Agent: "sim", Status: state.StatusFailed, Level: 2, Text: "first", Created: at(1), ResultTail: "boom"},
		{ID: "t_orphan01", Parent: "t_pruned01", Agent: "sim", Status: state.StatusDone, Level: 2, Text: "parent gone", Created: at(3)},
	} {
		st.Tasks[t.ID] = t
	}
	return st
}

func TestBuildTree(t *testing.T) {
	nodes, err := BuildTree(lineageState(), "")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	PrintTree(&b, nodes)
	want := "t_root0001  sim  running  L1  root\n" +
		"├─ t_kid00001  sim  failed  L2  first\n" +
		"└─ t_kid00002  sim  done  L2  second\n" +
		"t_orphan01  sim  done  L2  parent gone\n"
	if b.String() != want {
		t.Errorf("tree:\n%s\nwant (roots and children oldest first; a task whose parent is gone is a root):\n%s", b.String(), want)
	}
	if _, err := BuildTree(lineageState(), "t_nope"); err == nil {
		t.Error("an unknown root: no error")
	}
}

func TestCollectChildren(t *testing.T) {
	exitOf := func(t *state.Task) int { // a stand-in for cmd's table
		if t.Status == state.StatusDone {
			return 0
		}
		return 1
	}
	c, err := CollectChildren(lineageState(), "t_root", exitOf)
	if err != nil {
		t.Fatal(err)
	}
	if c.Parent != "t_root0001" || c.AllFinished != true || len(c.Children) != 2 || c.Children[0].ID != "t_kid00001" {
		t.Fatalf("collection %+v", c)
	}
	if c.Children[0].ExitCode != 1 || c.Children[1].ExitCode != 0 || c.Children[1].Answer != "42" {
		t.Errorf("children %+v", c.Children)
	}
	var b bytes.Buffer
	PrintCollection(&b, c)
	if !strings.Contains(b.String(), "    | boom") || !strings.Contains(b.String(), "    42") {
		t.Errorf("printed:\n%s", b.String())
	}
}
