package messaging

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/state"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", "awareness", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run 'go test ./runner/messaging -run Awareness -update' to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file:\n--- got ---\n%s--- want ---\n%s", p, got, want)
	}
}

var awNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func awTask(id, project, agent string, status state.Status, started time.Duration, text string, turns ...string) *state.Task {
	t := &state.Task{ID: id, Project: project, Agent: agent, Status: status, Text: text,
		Created: awNow.Add(-started - time.Second)}
	if status != state.StatusQueued && status != state.StatusStarting {
		t.Started = awNow.Add(-started)
	}
	for _, s := range turns {
		t.AddTurn(awNow, s)
	}
	return t
}

func awState(ts ...*state.Task) *state.State {
	st := state.New()
	for _, t := range ts {
		st.Tasks[t.ID] = t
	}
	return st
}

func sampleState() (*state.State, *state.Task) {
	self := awTask("t_self0000", "api", "claude", state.StatusStarting, 0, "Add rate limiting")
	st := awState(
		self,
		awTask("t_api00001", "api", "claude", state.StatusRunning, 12*time.Minute,
			"Fix the login bug\nwhere sessions expire too early", "read auth.go", "edited auth.go and ran go test ./auth"),
		awTask("t_api00002", "api", "codex", state.StatusNeedsInput, 3*time.Hour+5*time.Minute,
			"Upgrade the database driver", "asked to approve running migrations"),
		awTask("t_web00001", "web", "gemini", state.StatusRunning, 45*time.Second, "Make the header sticky"),
		awTask("t_web00002", "web", "claude", state.StatusQueued, 50*time.Hour, "Write docs for \x1b[31mthe\x1b[0m\tAPI\x1b]0;title\x07 now\x00"),
		awTask("t_nopro001", "", "sim", state.StatusReady, 2*time.Minute, "   \n  say hello  "),
		// Not active: never listed.
		awTask("t_done0001", "api", "claude", state.StatusDone, time.Hour, "Finished work"),
		awTask("t_orph0001", "api", "claude", state.StatusOrphaned, time.Hour, "Lost pane"),
		awTask("t_fail0001", "web", "claude", state.StatusFailed, time.Hour, "Failed work"),
	)
	return st, self
}

func TestAwarenessGolden(t *testing.T) {
	st, self := sampleState()
	long := awTask("t_long0001", "api", "claude", state.StatusRunning, time.Minute,
		strings.Repeat("very long task text ", 20), strings.Repeat("a long turn summary ", 20))
	tests := []struct {
		name string
		st   *state.State
		opts AwarenessOptions
	}{
		{"all", st, AwarenessOptions{Mode: AwarenessAll}},
		{"default-mode", st, AwarenessOptions{}},
		{"project", st, AwarenessOptions{Mode: AwarenessProject}},
		{"off", st, AwarenessOptions{Mode: AwarenessOff}},
		{"capped", st, AwarenessOptions{Mode: AwarenessAll, MaxChars: 300}},
		{"header-only-fits", st, AwarenessOptions{Mode: AwarenessAll, MaxChars: 62}},
		{"too-small", st, AwarenessOptions{Mode: AwarenessAll, MaxChars: 20}},
		{"alone", awState(self), AwarenessOptions{}},
		{"long-lines", awState(self, long), AwarenessOptions{}},
		{"files", awState(self, withFiles(st.Tasks["t_api00001"], false, 9), withFiles(long, true, 2)), AwarenessOptions{}},
	}
	// A child: its parent (running) and siblings (one done, one queued)
	// come first, in any status, then the other active tasks.
	child := awTask("t_child001", "api", "sim", state.StatusStarting, 0, "Write the tests")
	child.Parent = "t_api00001"
	sib1 := awTask("t_sib00001", "web", "sim", state.StatusDone, 5*time.Minute, "Write the docs", "wrote README.md")
	sib1.Parent = "t_api00001"
	sib2 := awTask("t_sib00002", "api", "codex", state.StatusQueued, time.Minute, "Review the tests")
	sib2.Parent = "t_api00001"
	family := awState(child, sib1, sib2)
	for id, x := range st.Tasks {
		if id != self.ID {
			family.Tasks[id] = x
		}
	}
	familyOnly := awState(child, sib1, st.Tasks["t_api00001"])
	tests = append(tests, []struct {
		name string
		st   *state.State
		opts AwarenessOptions
	}{
		{"child", family, AwarenessOptions{Mode: AwarenessAll}},
		{"child-project", family, AwarenessOptions{Mode: AwarenessProject}},
		{"child-capped", family, AwarenessOptions{Mode: AwarenessAll, MaxChars: 400}},
		{"child-family-only", familyOnly, AwarenessOptions{}},
	}...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			opts.Now = awNow
			self := self
			if strings.HasPrefix(tt.name, "child") {
				self = child
			}
			got := RenderAwareness(tt.st, self, opts)
			max := opts.MaxChars
			if max == 0 {
				max = DefaultAwarenessMax
			}
			if n := utf8.RuneCountInString(got); n > max {
				t.Errorf("%d characters, over the cap of %d", n, max)
			}
			if strings.ContainsRune(got, '\x1b') || strings.Contains(got, self.ID) {
				t.Errorf("output has an escape or the task itself:\n%s", got)
			}
			golden(t, tt.name, got)
		})
	}
}

// withFiles is a copy of t that changed n files (one of them with an
// escape in its name), in its own worktree or in the shared tree.
func withFiles(t *state.Task, shared bool, n int) *state.Task {
	c := *t
	files := []string{"evil\x1b[2Jname.go"}
	for i := 1; i < n; i++ {
		files = append(files, fmt.Sprintf("pkg/file%02d.go", i))
	}
	c.Changes = &state.Changes{Repo: "/src/api/.git", Files: files, Count: n, Shared: shared}
	if !shared {
		c.Branch = "runner/" + c.ID
	}
	return &c
}

func TestAwarenessCapCountsEveryTask(t *testing.T) {
	self := &state.Task{ID: "t_self0000", Project: "p"}
	st := awState(self)
	for i := range 200 {
		id := st.NewTaskID()
		st.Tasks[id] = awTask(id, "p", "claude", state.StatusRunning, time.Duration(i)*time.Minute, "a task")
	}
	got := RenderAwareness(st, self, AwarenessOptions{Now: awNow})
	if n := utf8.RuneCountInString(got); n > DefaultAwarenessMax || n < DefaultAwarenessMax-100 {
		t.Fatalf("%d characters; want close to the cap of %d", n, DefaultAwarenessMax)
	}
	shown := strings.Count(got, "\n- ")
	var more int
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if _, err := fmt.Sscanf(lines[len(lines)-1], "+%d more", &more); err != nil || shown+more != 200 {
		t.Fatalf("shown %d + more %d != 200 (last line %q)", shown, more, lines[len(lines)-1])
	}
}

func TestParseAwarenessMode(t *testing.T) {
	for _, s := range []string{"all", "project", "off"} {
		if m, err := ParseAwarenessMode(s); err != nil || string(m) != s {
			t.Errorf("ParseAwarenessMode(%q) = %q, %v", s, m, err)
		}
	}
	if _, err := ParseAwarenessMode("some"); !errors.Is(err, fault.ErrUsage) {
		t.Errorf("ParseAwarenessMode(some) = %v, want a usage error", err)
	}
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second:                    "0s",
		0:                               "0s",
		45 * time.Second:                "45s",
		12*time.Minute + 59*time.Second: "12m",
		3*time.Hour + 5*time.Minute:     "3h05m",
		50 * time.Hour:                  "2d02h",
	} {
		if got := shortDuration(d); got != want {
			t.Errorf("shortDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
