package projects

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/statetest"
	"github.com/runner-cli/runner/runner/fault"

	"github.com/runner-cli/runner/state"
)

func TestValidateName(t *testing.T) {
	long := strings.Repeat("a", 64)
	for name, ok := range map[string]bool{
		"api": true, "a": true, "0": true, "my-api.v2_x": true, long: true, long + "a": false,
		"": false, "-api": false, ".api": false, "_api": false, "Api": false, "my api": false,
		"a/b": false, "ä": false,
	} {
		err := ValidateName(name)
		if ok != (err == nil) {
			t.Errorf("ValidateName(%q) = %v", name, err)
		}
		if err != nil && !errors.Is(err, fault.ErrUsage) {
			t.Errorf("ValidateName(%q) error is not a usage error: %v", name, err)
		}
	}
	err := ValidateName("My API")
	if err == nil || !strings.Contains(err.Error(), `"my-api"`) {
		t.Errorf("no suggestion in %v", err)
	}
}

func TestAddListRemoveProject(t *testing.T) {
	s := statetest.Store(t)
	ctx := t.Context()
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.Mkdir("sub", 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := Add(ctx, s, "api", "sub/../sub")
	if err != nil {
		t.Fatal(err)
	}
	wantDir := filepath.Join(dir, "sub")
	if p.Dir != wantDir || p.Name != "api" || p.Added.IsZero() {
		t.Fatalf("AddProject = %+v, want dir %s", p, wantDir)
	}
	if _, err := Add(ctx, s, "web", dir); err != nil {
		t.Fatal(err)
	}
	list, err := List(ctx, s)
	if err != nil || len(list) != 2 || list[0].Name != "api" || list[1].Name != "web" {
		t.Fatalf("ListProjects = %+v, %v", list, err)
	}
	events, _, err := s.ReadJournal(ctx)
	if err != nil || len(events) != 2 || events[0].Kind != state.EventProjectAdded || events[0].ProjectRecord.Dir != wantDir {
		t.Fatalf("journal = %+v, %v", events, err)
	}
	if err := Remove(ctx, s, "api"); err != nil {
		t.Fatal(err)
	}
	list, _ = List(ctx, s)
	if len(list) != 1 || list[0].Name != "web" {
		t.Fatalf("after rm: %+v", list)
	}
	if _, err := os.Stat(wantDir); err != nil {
		t.Fatalf("rm touched the directory: %v", err)
	}
}

func TestProjectBadInputWritesNothing(t *testing.T) {
	s := statetest.Store(t)
	ctx := t.Context()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o600)

	// On a fresh machine, bad input does not even create the state directory.
	for _, c := range []struct{ name, dir, want string }{
		{"Bad Name", dir, "invalid project name"},
		{"api", filepath.Join(dir, "missing"), "does not exist"},
		{"api", file, "is not a directory"},
		{"api", "", "no directory given"},
	} {
		_, err := Add(ctx, s, c.name, c.dir)
		if !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("AddProject(%q, %q) = %v, want a usage error with %q", c.name, c.dir, err, c.want)
		}
	}
	if err := Remove(ctx, s, "BAD"); !errors.Is(err, fault.ErrUsage) {
		t.Errorf("RemoveProject(BAD) = %v", err)
	}
	if _, err := os.Stat(s.Dir()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("bad input created the state directory: %v", err)
	}

	if _, err := Add(ctx, s, "api", dir); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(s.Path())
	other := t.TempDir()
	_, err := Add(ctx, s, "api", other)
	if !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "already exists") || !strings.Contains(err.Error(), "runner project rm api") {
		t.Errorf("duplicate add = %v", err)
	}
	if err := Remove(ctx, s, "nope"); !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "runner project list") {
		t.Errorf("RemoveProject(nope) = %v", err)
	}
	if after, _ := os.ReadFile(s.Path()); !bytes.Equal(before, after) {
		t.Fatal("refused input changed the state file")
	}
}

func TestRemoveProjectWithActiveTasks(t *testing.T) {
	s := statetest.Store(t)
	ctx := t.Context()
	if _, err := Add(ctx, s, "api", t.TempDir()); err != nil {
		t.Fatal(err)
	}
	err := s.Update(ctx, func(st *state.State) error {
		st.Tasks["t_run00001"] = &state.Task{ID: "t_run00001", Project: "api", Status: state.StatusRunning}
		st.Tasks["t_don00001"] = &state.Task{ID: "t_don00001", Project: "api", Status: state.StatusDone, Ended: clock.Now()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = Remove(ctx, s, "api")
	if !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "t_run00001") || strings.Contains(err.Error(), "t_don00001") {
		t.Fatalf("RemoveProject with an active task = %v", err)
	}
}

func TestPrune(t *testing.T) {
	s := statetest.Store(t)
	ctx := t.Context()
	if _, err := Prune(ctx, s, -time.Second); !errors.Is(err, fault.ErrUsage) {
		t.Fatalf("negative prune = %v", err)
	}
	old := clock.Now().Add(-2 * time.Hour)
	s.Update(ctx, func(st *state.State) error {
		st.Tasks["t_don00001"] = &state.Task{ID: "t_don00001", Status: state.StatusDone, Ended: old}
		return nil
	})
	removed, err := Prune(ctx, s, time.Hour)
	if err != nil || len(removed) != 1 {
		t.Fatalf("Prune = %v, %v", removed, err)
	}
	events, _, _ := s.ReadJournal(ctx)
	if len(events) != 1 || events[0].Kind != state.EventPrune || !strings.Contains(events[0].Message, "t_don00001") {
		t.Fatalf("journal = %+v", events)
	}
}
