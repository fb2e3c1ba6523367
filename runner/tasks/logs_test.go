package tasks

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runner-cli/runner/state"
)

// fakeGetter answers GetTask with the next status of a script, appending
// to the transcript what each step wrote meanwhile.
type fakeGetter struct {
	t      *state.Task
	steps  []state.Status
	writes []string
	calls  int
}

func (f *fakeGetter) GetTask(_ context.Context, ref string) (*state.Task, error) {
	if ref != f.t.ID {
		return nil, os.ErrNotExist
	}
	i := min(f.calls, len(f.steps)-1)
	f.calls++
	if i < len(f.writes) {
		fh, err := os.OpenFile(f.t.Transcript, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
		if err != nil {
			return nil, err
		}
		fh.WriteString(f.writes[i])
		fh.Close()
	}
	t := *f.t
	t.Status = f.steps[i]
	return &t, nil
}

// TestCopyLog: once, the transcript as it is; followed, each part once,
// the last after the task ended; no transcript yet is empty.
func TestCopyLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t_a.log")
	task := &state.Task{ID: "t_a", Transcript: path, Status: state.StatusRunning}
	var got []string
	emit := func(b []byte, last bool) {
		s := string(b)
		if last {
			s = "[last]" + s
		}
		got = append(got, s)
	}
	if err := CopyLog(context.Background(), &fakeGetter{t: task}, task, false, emit); err != nil || strings.Join(got, "|") != "" {
		t.Fatalf("no transcript: %q %v", got, err)
	}
	os.WriteFile(path, []byte("one\n"), 0o600)
	got = nil
	g := &fakeGetter{t: task, steps: []state.Status{state.StatusRunning, state.StatusDone}, writes: []string{"two\n", "three\n"}}
	if err := CopyLog(context.Background(), g, task, true, emit); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != "one\n|two\n|[last]three\n" || g.calls != 2 {
		t.Errorf("followed: %q after %d reads", got, g.calls)
	}
	got = nil
	g = &fakeGetter{t: task, steps: []state.Status{state.StatusOrphaned}}
	if err := CopyLog(context.Background(), g, task, true, emit); err != nil || len(got) != 2 {
		t.Errorf("orphaned: %q %v", got, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g = &fakeGetter{t: task, steps: []state.Status{state.StatusRunning}}
	if err := CopyLog(ctx, g, task, true, emit); err != context.Canceled {
		t.Errorf("cancelled: %v", err)
	}
	if err := CopyLog(context.Background(), &fakeGetter{t: &state.Task{ID: "t_b"}}, task, true, emit); err == nil {
		t.Error("a task gone was followed")
	}
	dir := t.TempDir()
	if err := CopyLog(context.Background(), g, &state.Task{ID: "t_d", Transcript: dir}, false, emit); err == nil || !strings.Contains(err.Error(), "logs t_d") {
		t.Errorf("a transcript that cannot be read: %v", err)
	}
}
