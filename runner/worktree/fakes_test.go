package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/state"
)

// memStore is a Store over a state in memory; textErr fails TaskText
// (a task's text file gone or corrupt).
type memStore struct {
	mu      sync.Mutex
	st      *state.State
	textErr error
	updates int
}

func (m *memStore) TaskText(t *state.Task) (string, error) {
	if m.textErr != nil {
		return "", m.textErr
	}
	return t.Text, nil
}

func (m *memStore) Update(ctx context.Context, fn func(*state.State) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.updates++
	return fn(m.st)
}

// memCore is a Core over a memStore: its state is reconciled already.
type memCore struct{ m *memStore }

func (c memCore) Reconcile(ctx context.Context) (*state.State, error) { return c.m.st, nil }

func (c memCore) GetTask(ctx context.Context, ref string) (*state.Task, error) {
	if x := c.m.st.Tasks[ref]; x != nil {
		return x, nil
	}
	return nil, fmt.Errorf("no task %s", ref)
}

// journal collects the journal's events as "kind id: text".
type journal struct {
	mu     sync.Mutex
	events []string
}

func (j *journal) Journal(ctx context.Context, t *state.Task, kind, msg string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.events = append(j.events, kind+" "+t.ID+": "+msg)
}

// fixture is a repository (branch main, a.txt committed) registered as
// project api, and the tasks dispatched with worktrees from it, through
// Deps whose git runs here (a host named "gone" cannot be reached).
type fixture struct {
	t     *testing.T
	repo  string
	store *memStore
	log   *journal
	d     Deps
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	repo := filepath.Join(t.TempDir(), "api")
	if err := os.Mkdir(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "init", "-q", "-b", "main")
	write(t, repo, "a.txt", "base\n")
	git(t, repo, "add", "a.txt")
	git(t, repo, "commit", "-q", "-m", "base")
	st := state.New()
	st.Projects["api"] = &state.Project{Name: "api", Dir: repo}
	f := &fixture{t: t, repo: repo, store: &memStore{st: st}, log: &journal{}}
	gitOn := func(ctx context.Context, host string) (context.Context, error) {
		if host == "gone" {
			return nil, errors.New("host gone: unreachable")
		}
		return ctx, nil
	}
	f.d = Deps{Store: f.store, Record: f.log, Now: func() time.Time { return time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC) },
		Warn: func(format string, args ...any) { t.Logf("warn: "+format, args...) },
		Core: memCore{f.store}, Git: Gitsnap{},
		GitContext: func(ctx context.Context, x *state.Task) (context.Context, error) { return gitOn(ctx, x.Tmux.Host) },
		GitOn:      gitOn,
	}
	return f
}

// task dispatches id with a worktree from the repository (its snapshot,
// its branch runner/<id>) and writes files there, uncommitted, as its
// agent would.
func (f *fixture) task(id string, status state.Status, files map[string]string) *state.Task {
	t := f.t
	t.Helper()
	snap, err := gitsnap.Take(t.Context(), f.repo, gitsnap.Options{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), id)
	if err := gitsnap.WorktreeAdd(t.Context(), f.repo, dir, gitsnap.BranchPrefix+id, snap.Commit); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		write(t, dir, name, text)
	}
	x := &state.Task{ID: id, Project: "api", Agent: "sim", Text: "change " + id, Status: status, Dir: dir,
		Origin: f.repo, Branch: gitsnap.BranchPrefix + id, Created: f.d.Now(), Ended: f.d.Now()}
	f.store.st.Tasks[id] = x
	return x
}

// file is name's content in the repository's work tree ("" if none).
func (f *fixture) file(name string) string {
	b, _ := os.ReadFile(filepath.Join(f.repo, name))
	return string(b)
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
