package group

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/internal/statetest"
	"github.com/runner-cli/runner/internal/transport"
	"github.com/runner-cli/runner/runner/worktree"
	"github.com/runner-cli/runner/state"
)

// fakeRunner is the part of runner a group's operations use, in memory
// around a real state store: its Tasks and Merges record their calls.
type fakeRunner struct {
	t     *testing.T
	store *state.Store
	mu    sync.Mutex
	calls []string
	// alive is what the supervisor's liveness check answers.
	alive bool
	// forecast answers Forecast (nil: no forecast).
	forecast func(ctx context.Context, ids []string, into string) (map[string]*worktree.Check, error)
}

func newFake(t *testing.T, tasks ...*state.Task) *fakeRunner {
	return &fakeRunner{t: t, store: statetest.WithTasks(t, tasks...)}
}

func (f *fakeRunner) record(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
}

func (f *fakeRunner) saw(prefix string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		if strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	return out
}

// hostCtx is gitsnap's ctx for a "host": this machine through a
// transport, so gitsnap takes its remote path (env and git -C, its file
// operations as sh scripts).
func hostCtx(ctx context.Context, host string) (context.Context, error) {
	if host == "" {
		return ctx, nil
	}
	if host == "gone" {
		return nil, fmt.Errorf("host gone: unreachable")
	}
	return gitsnap.On(ctx, transport.Local{}), nil
}

// deps are the fake's Deps: f is their Tasks and Merges, fakeHosts
// their Hosts.
func (f *fakeRunner) deps() Deps {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return Deps{Store: f.store, Tasks: f, Merges: f, Hosts: fakeHosts{}, Now: func() time.Time { return now },
		Alive: func(int, string) bool { return f.alive },
		Say:   func(format string, args ...any) { f.record("say "+format, args...) },
	}
}

var (
	_ Tasks  = (*fakeRunner)(nil)
	_ Merges = (*fakeRunner)(nil)
	_ Hosts  = fakeHosts{}
	_ Store  = (*state.Store)(nil)
)

// Reconcile reads the state as it is.
func (f *fakeRunner) Reconcile(ctx context.Context) (*state.State, error) { return f.store.Read(ctx) }

// Task is task id of the state.
func (f *fakeRunner) Task(ctx context.Context, id string) (*state.Task, error) {
	st, err := f.store.Read(ctx)
	if err != nil {
		return nil, err
	}
	if t := st.Tasks[id]; t != nil {
		return t, nil
	}
	return nil, fmt.Errorf("no task %s", id)
}

func (f *fakeRunner) Send(_ context.Context, id, text string) error {
	f.record("send %s %s", id, text)
	return nil
}

func (f *fakeRunner) Cancel(_ context.Context, id, reason string) error {
	f.record("cancel %s %s", id, reason)
	return nil
}

func (f *fakeRunner) Close(_ context.Context, id string) error {
	f.record("close %s", id)
	return nil
}

// Forecast is f.forecast's, none without it.
func (f *fakeRunner) Forecast(ctx context.Context, ids []string, into string) (map[string]*worktree.Check, error) {
	if f.forecast != nil {
		return f.forecast(ctx, ids, into)
	}
	return nil, nil
}

func (f *fakeRunner) Merge(_ context.Context, req worktree.MergeRequest) error {
	f.record("merge %s", req.Ref)
	return nil
}

// MergeHere merges t's branch into its origin with real git.
func (f *fakeRunner) MergeHere(ctx context.Context, req worktree.MergeRequest, t *state.Task) error {
	f.record("mergehere %s %s %s", req.Ref, t.Origin, t.Tmux.Host)
	snap, err := gitsnap.Get(ctx, t.Origin, t.ID)
	if err != nil {
		return err
	}
	_, err = gitsnap.Merge(ctx, t.Origin, t.Dir, t.Branch, gitsnap.MergeOptions{Base: snap.Commit, Message: "Merge " + t.Branch})
	return err
}

// fakeHosts are hosts that are this machine through a transport, but
// "gone", which cannot be reached.
type fakeHosts struct{}

func (fakeHosts) GitOn(ctx context.Context, host string) (context.Context, error) {
	return hostCtx(ctx, host)
}

func (fakeHosts) Via(_ context.Context, host string) (transport.Transport, error) {
	if host == "gone" {
		return nil, fmt.Errorf("host gone: unreachable")
	}
	return transport.Local{}, nil
}

// fakeSandbox wraps checks with there (here: unwrapped).
type fakeSandbox struct {
	there func(ctx context.Context, t *state.Task, argv []string) ([]string, error)
}

func (fakeSandbox) Wrap(_ context.Context, _ *state.Task, argv []string) ([]string, error) {
	return argv, nil
}

func (s fakeSandbox) WrapThere(ctx context.Context, t *state.Task, argv []string) ([]string, error) {
	return s.there(ctx, t, argv)
}

// addGroup records g.
func (f *fakeRunner) addGroup(g *state.Group) {
	f.t.Helper()
	if err := f.store.UpdateGroups(f.t.Context(), func(gs map[string]*state.Group) error {
		gs[g.ID] = g
		return nil
	}); err != nil {
		f.t.Fatal(err)
	}
}

// git runs git in dir for a test.
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

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// repoHere is a repository with one commit (a.txt) and the user's
// uncommitted mine.txt.
func repoHere(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "here")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q", "-b", "main")
	writeFile(t, dir, "a.txt", "base\n")
	git(t, dir, "add", "a.txt")
	git(t, dir, "commit", "-q", "-m", "initial")
	writeFile(t, dir, "mine.txt", "the user's own work\n")
	return dir
}
