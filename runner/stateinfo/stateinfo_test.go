package stateinfo

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/statetest"
	"github.com/runner-cli/runner/state"
)

// TestPaths: every file and folder, under the store's directory.
func TestPaths(t *testing.T) {
	s := statetest.Store(t)
	p := Paths(s)
	if p["dir"] != s.Dir() || p["state"] != s.Path() || len(p) != 7 {
		t.Errorf("paths %v", p)
	}
	for k, v := range p {
		if !strings.HasPrefix(v, s.Dir()) {
			t.Errorf("%s: %s is outside %s", k, v, s.Dir())
		}
	}
}

// TestDumpAndSummary: a real state's tasks and projects, as JSON's map
// and as text: counts by status, each task's first line clipped.
func TestDumpAndSummary(t *testing.T) {
	long := strings.Repeat("x", 70) + "\nsecond line"
	s := statetest.WithTasks(t,
		&state.Task{ID: "t_run", Project: "api", Agent: "sim", Status: state.StatusRunning, Text: "fix it"},
		&state.Task{ID: "t_done", Status: state.StatusDone, Text: long})
	st := statetest.Read(t, s)
	dump, err := Dump(st)
	if err != nil {
		t.Fatal(err)
	}
	if tasks := dump["tasks"].(map[string]*state.Task); len(tasks) != 2 || tasks["t_run"].Agent != "sim" {
		t.Errorf("tasks %v", dump["tasks"])
	}
	for _, k := range []string{"version", "generation", "updated", "projects", "messages"} {
		if _, ok := dump[k]; !ok {
			t.Errorf("no %q", k)
		}
	}
	var b bytes.Buffer
	if err := Summary(context.Background(), &b, s, s.Path()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{s.Path() + " (version ", "Projects: 1", "  api  /tmp", "Tasks: 2 (1 running, 1 done), 0 archived",
		"t_run   api  sim", "t_done  -    -", strings.Repeat("x", 59) + "…"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "second line") {
		t.Error("a task's second line shown")
	}
	if err := Summary(context.Background(), &b, failing{}, "x"); err == nil {
		t.Error("a state that cannot be read summed up")
	}
	b.Reset()
	WriteSummary(&b, "p", &state.State{}, nil)
	if !strings.Contains(b.String(), "never written") || !strings.Contains(b.String(), "Tasks: 0, 0 archived") {
		t.Errorf("empty: %s", b.String())
	}
}

type failing struct{}

func (failing) Read(context.Context) (*state.State, error) { return nil, errors.New("locked") }

// TestWriteRepair: healthy, rebuilt from the previous generation with
// segments lost, and a newer runner's files kept.
func TestWriteRepair(t *testing.T) {
	var b bytes.Buffer
	WriteRepair(&b, "/s/state.json", "/s", &state.RepairReport{Healthy: true})
	if b.String() != "/s/state.json is healthy: nothing to repair\n" {
		t.Errorf("healthy: %q", b.String())
	}
	b.Reset()
	WriteRepair(&b, "/s/state.json", "/s", &state.RepairReport{MovedTo: "/s/state.json.corrupt-1", FromPrevious: true, FromRecords: 2, Replayed: 3,
		Projects: 1, Tasks: 2, Archived: 4, DroppedSegments: []string{"a1", "a2"}, KeptNewer: true})
	for _, want := range []string{"moved the bad state file to /s/state.json.corrupt-1\n",
		"rebuilt from the previous generation, 2 task record(s) and 3 journal event(s): 1 project(s), 2 task(s), 4 archived\n",
		"(their tasks are lost): a1, a2\n", "archive in /s were kept"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
	b.Reset()
	WriteRepair(&b, "p", "d", &state.RepairReport{})
	if !strings.Contains(b.String(), "rebuilt from an empty state") {
		t.Errorf("empty: %s", b.String())
	}
}

// TestPruneAge: the age given wins; else the retention, none when 0.
func TestPruneAge(t *testing.T) {
	for _, c := range []struct {
		age       time.Duration
		given     bool
		retention time.Duration
		want      time.Duration
		ok        bool
	}{
		{0, true, 0, 0, true},
		{time.Hour, true, 24 * time.Hour, time.Hour, true},
		{time.Hour, false, 24 * time.Hour, 24 * time.Hour, true},
		{time.Hour, false, 0, 0, false},
	} {
		if got, ok := PruneAge(c.age, c.given, c.retention); got != c.want || ok != c.ok {
			t.Errorf("%+v: %v %v", c, got, ok)
		}
	}
}
