package tasks

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/runner/mailbox"
	"github.com/runner-cli/runner/state"
)

// fakeGroups is a store's groups.
type fakeGroups struct {
	gs  map[string]*state.Group
	err error
}

func (f fakeGroups) Groups(context.Context) (map[string]*state.Group, error) { return f.gs, f.err }

// TestMarkGroups: a candidate gets its group's id, every other task none;
// an error reading the groups is returned.
func TestMarkGroups(t *testing.T) {
	list := []*state.Task{{ID: "t_a"}, {ID: "t_b"}, {ID: "t_c"}}
	g := fakeGroups{gs: map[string]*state.Group{"g_1": {ID: "g_1", Tasks: []string{"t_a", "t_c"}}}}
	if err := MarkGroups(context.Background(), g, list); err != nil {
		t.Fatal(err)
	}
	if list[0].Group != "g_1" || list[1].Group != "" || list[2].Group != "g_1" {
		t.Errorf("groups %q %q %q", list[0].Group, list[1].Group, list[2].Group)
	}
	if err := MarkGroups(context.Background(), fakeGroups{err: errors.New("locked")}, list); err == nil {
		t.Error("no error")
	}
	if err := MarkGroups(context.Background(), fakeGroups{}, nil); err != nil {
		t.Errorf("no groups: %v", err)
	}
}

// TestWriteList: the optional columns appear only when some task has
// them, in their order; a task waiting for a pool shows the pool.
func TestWriteList(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	plain := &state.Task{ID: "t_plain", Dir: "/src/api", Agent: "sim", Status: state.StatusRunning, Created: now.Add(-time.Minute), Text: "fix it\nmore"}
	var b bytes.Buffer
	if err := WriteList(&b, []*state.Task{plain}, now); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if strings.Join(strings.Fields(lines[0]), " ") != "ID PROJECT AGENT STATUS AGE LEVEL PARENT TASK" {
		t.Errorf("head %q", lines[0])
	}
	if strings.Join(strings.Fields(lines[1]), " ") != "t_plain api sim running 1m 0 - fix it" {
		t.Errorf("line %q", lines[1])
	}
	rich := &state.Task{ID: "t_rich", Project: "web", Agent: "claude", Status: state.StatusQueued, Created: now, Group: "g_1", Branch: "runner/t_rich",
		Tmux:     state.TmuxTarget{Pool: "build"},
		Overlaps: []state.Overlap{{Task: "t_plain", Files: []string{"a", "b"}}},
		Spend:    state.Spend{Input: 1000, Output: 200, Turns: 1}}
	b.Reset()
	if err := WriteList(&b, []*state.Task{rich, plain}, now); err != nil {
		t.Fatal(err)
	}
	lines = strings.Split(strings.TrimSpace(b.String()), "\n")
	if got := strings.Join(strings.Fields(lines[0]), " "); got != "ID PROJECT HOST AGENT STATUS AGE LEVEL PARENT GROUP BRANCH OVERLAP TOKENS TASK" {
		t.Errorf("head %q", got)
	}
	if !strings.Contains(lines[1], "(pool build)") || !strings.Contains(lines[1], "t_plain(2)") || !strings.Contains(lines[1], "runner/t_rich") {
		t.Errorf("rich line %q", lines[1])
	}
	if got := overlapCell(&state.Task{Overlaps: []state.Overlap{{Task: "a"}, {Task: "b"}}}); got != "2 tasks" {
		t.Errorf("two overlaps: %q", got)
	}
	if got := hostCell(&state.Task{Tmux: state.TmuxTarget{Host: "b1", Pool: "build"}}); got != "b1" {
		t.Errorf("placed: %q", got)
	}
}

// TestWriteStatus: each part of status appears when the task has it.
func TestWriteStatus(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	code := 1
	task := &state.Task{ID: "t_abc", Agent: "sim", Status: state.StatusLimited, Dir: "/src/api", Level: 1, Parent: "t_top",
		Group: "g_1", After: []string{"t_x", "t_y"}, Tmux: state.TmuxTarget{Host: "b1", Pane: "%3", Session: "api", Socket: "runner", Pool: "build"},
		Ports: state.PortRange{First: 4000, Count: 10}, AgentSession: "s1", Branch: "runner/t_abc", Origin: "main", Commit: "abc123",
		Changes:  &state.Changes{Files: []string{"a.go", "b\x1b[31m.go"}, Count: 2, Time: now},
		Overlaps: []state.Overlap{{Task: "t_x", Files: []string{"a.go"}}},
		Spend:    state.Spend{Unknown: 2}, Live: state.Spend{Input: 10, Output: 5},
		ExitCode: &code, Text: "fix the parser", TextFile: "/x/text", Sandbox: []string{"/src/api"},
		History:  []state.StatusChange{{Time: now, Status: state.StatusRunning, Reason: "delivered"}},
		Question: "Proceed?\n1. Yes", ResultTail: "done\nok"}
	tree := &state.State{Tasks: map[string]*state.Task{
		"t_abc": task, "t_kid": {ID: "t_kid", Parent: "t_abc", Spend: state.Spend{Input: 5, Turns: 1}},
	}}
	msgs := []mailbox.Entry{
		{Message: &state.Message{Status: state.MessageDelivered}, Direction: "in"},
		{Message: &state.Message{Status: state.MessageDelivered}, Direction: "in"},
		{Message: &state.Message{Status: state.MessageDelivered}, Direction: "out"},
	}
	var b bytes.Buffer
	WriteStatus(&b, task, tree, msgs)
	out := b.String()
	for _, want := range []string{
		"task      t_abc (limited)", "project   (path)  /src/api", "level     1  parent t_top  source -",
		"group     g_1 (runner compare g_1)", "after     t_x, t_y", "pool      build (placed on: b1)",
		"pane      %3 (host b1, session api, socket runner there)", "ports     4000-4009", "session   s1",
		"branch    runner/t_abc in worktree /src/api, made from main", "commit    abc123",
		"changed   2 file(s): a.go", "overlaps  t_x: a.go (runner msg t_x TEXT)",
		"limit     the CLI gave no reset time", "spend     unknown (2 turn(s)", "running   ", "tree      ", "in 2 tasks",
		"messages  2 in delivered, 1 out delivered (runner inbox t_abc)",
		"exit code 1", "text      /x/text", "sandbox   bwrap: read-only but /src/api", "history", "delivered",
		"question\n  Proceed?\n  1. Yes", "result\n  done\n  ok",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Error("a file name's escape reached the terminal")
	}
	b.Reset()
	WriteStatus(&b, &state.Task{ID: "t_min", Status: state.StatusDone}, nil, nil)
	for _, absent := range []string{"group", "messages", "changed", "limit", "tree"} {
		if strings.Contains(b.String(), absent+" ") {
			t.Errorf("%q in a bare task's status:\n%s", absent, b.String())
		}
	}
	if got := spendLine(state.Spend{Input: 3, Output: 4, Turns: 1, Unknown: 1}); !strings.HasSuffix(got, "over 2 turn(s)") {
		t.Errorf("spendLine %q", got)
	}
}

// TestWriteUsage: a row per group with the task's line, the total; what
// no turn knows is "?", a cost lacking some turns' is "≥".
func TestWriteUsage(t *testing.T) {
	rep := &UsageReport{By: ByTask, Tasks: 3, Rows: []UsageRow{
		{Key: "t_a", Text: "fix\x1b[2J it", Tasks: 1, Spend: state.Spend{Input: 1500, Output: 20, Turns: 1, Costed: 1, CostUSD: 0.5}},
		{Key: "t_b", Tasks: 1, Spend: state.Spend{Unknown: 2}},
		{Key: "t_c", Tasks: 1},
	}, Total: state.Spend{Input: 1500, Output: 20, Turns: 1, Unknown: 2, Costed: 1, CostUSD: 0.5}}
	var b bytes.Buffer
	if err := WriteUsage(&b, rep); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 5 || !strings.HasPrefix(strings.TrimSpace(lines[0]), "TASK") {
		t.Fatalf("table\n%s", b.String())
	}
	field := func(i int) string { return strings.Join(strings.Fields(lines[i]), " ") }
	if got := field(1); !strings.HasPrefix(got, "t_a fix") || !strings.HasSuffix(got, "$0.5000") || strings.Contains(got, "\x1b") {
		t.Errorf("t_a: %q", got)
	}
	if got := field(2); got != "t_b 1 0 2 ? ? ? ? -" {
		t.Errorf("t_b: %q", got)
	}
	if got := field(3); got != "t_c 1 0 0 - - - - -" {
		t.Errorf("t_c: %q", got)
	}
	if got := field(4); !strings.HasPrefix(got, "total 3 1 2") || !strings.HasSuffix(got, "≥$0.5000") {
		t.Errorf("total: %q", got)
	}
}
