package ask

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
)

// fakeHost is a host that is this machine: its commands run here, as the
// host's shell would run them; Argv maps "runner" as remote.Argv does.
type fakeHost struct {
	argvErr, boxErr error
	ran             [][]string
	boxed           []string
}

func (f *fakeHost) Argv(_ context.Context, _ *profile.Profile, _ string, argv []string) ([]string, error) {
	return argv, f.argvErr
}

func (f *fakeHost) Command(ctx context.Context, argv ...string) *exec.Cmd {
	f.ran = append(f.ran, argv)
	return exec.CommandContext(ctx, argv[0], argv[1:]...)
}

// Sandbox marks the shadow's environment (IN_BOX=1) as a sandbox there
// would wrap it.
func (f *fakeHost) Sandbox(_ context.Context, t *state.Task, _ *profile.Profile, argv []string) ([]string, error) {
	f.boxed = append(f.boxed, t.ID)
	return append([]string{"env", "IN_BOX=1"}, argv...), f.boxErr
}

func (f *fakeHost) String() string { return "fake" }

func hostDeps(h *fakeHost, env map[string]string) Deps {
	return Deps{Env: fakeEnv(env),
		Hosts: func(_ context.Context, name string) (Host, error) {
			if name != "h" {
				return nil, errors.New("no host " + name)
			}
			return h, nil
		}}
}

// TestShadowThere: the shadow of a task on a host runs there, in its
// folder, with RUNNER_SHADOW_OF and the profile's Env, and answers; what
// fails there is said, naming the host.
func TestShadowThere(t *testing.T) {
	dir := t.TempDir()
	prof := &profile.Profile{Name: "shell", Command: []string{"sh"}, Env: map[string]string{"SHADOW_X": "x1"},
		Headless: []string{"sh", "-c", `echo "in $(pwd) for $RUNNER_SHADOW_OF $SHADOW_X: $1"; case $1 in fail) echo oops >&2; exit 3;; slow) sleep 30;; ssh) exit 255;; esac`, "sh", "{prompt}"}}
	task := &state.Task{ID: "t_there001", Agent: "shell", Dir: dir, Tmux: state.TmuxTarget{Host: "h"}}
	h := &fakeHost{}
	res := runShadow(t.Context(), hostDeps(h, nil), task, prof, "the question", time.Minute)
	if res.err != nil || res.answer != "in "+dir+" for t_there001 x1: the question" || res.exit == nil || *res.exit != 0 {
		t.Fatalf("answer %q, err %v, stderr %q", res.answer, res.err, res.stderr)
	}
	if len(h.ran) != 1 || h.ran[0][0] != "sh" || h.ran[0][4] != dir {
		t.Errorf("ran %q", h.ran)
	}
	for _, c := range []struct {
		prompt, want string
		timedOut     bool
	}{
		{"fail", "exited 3: oops", false},
		{"ssh", "ssh to host h (fake) failed", false},
		{"slow", "gave no answer within 1s", true},
	} {
		res := runShadow(t.Context(), hostDeps(h, nil), task, prof, c.prompt, time.Second)
		if res.err == nil || !strings.Contains(res.err.Error(), c.want) || res.timedOut != c.timedOut {
			t.Errorf("%s: err %v, timed out %v: want %q", c.prompt, res.err, res.timedOut, c.want)
		}
	}
	gone := *task
	gone.Dir = dir + "/gone"
	if res := runShadow(t.Context(), hostDeps(h, nil), &gone, prof, "q", time.Minute); res.err == nil || !strings.Contains(res.err.Error(), "its folder "+gone.Dir+" is missing on host h") {
		t.Errorf("folder gone: %v", res.err)
	}
}

// TestShadowThereSandboxed: the shadow of a sandboxed task on a host, or
// one asked by a sandboxed caller, runs there in the sandbox the host
// makes; a sandbox that cannot be made there is said, nothing run.
func TestShadowThereSandboxed(t *testing.T) {
	prof := &profile.Profile{Name: "shell", Command: []string{"sh"}, Headless: []string{"sh", "-c", `echo "box=$IN_BOX"`, "sh", "{prompt}"}}
	task := &state.Task{ID: "t_there003", Agent: "shell", Dir: t.TempDir(), Tmux: state.TmuxTarget{Host: "h"}, Sandbox: []string{"/w"}}
	h := &fakeHost{}
	if res := runShadow(t.Context(), hostDeps(h, nil), task, prof, "q", time.Minute); res.err != nil || res.answer != "box=1" {
		t.Errorf("sandboxed task: %q, %v", res.answer, res.err)
	}
	plain := *task
	plain.Sandbox = nil
	if res := runShadow(t.Context(), hostDeps(h, map[string]string{"RUNNER_CONFINED": "1"}), &plain, prof, "q", time.Minute); res.err != nil || res.answer != "box=1" {
		t.Errorf("confined caller: %q, %v", res.answer, res.err)
	}
	if res := runShadow(t.Context(), hostDeps(h, nil), &plain, prof, "q", time.Minute); res.err != nil || res.answer != "box=" {
		t.Errorf("neither: %q, %v", res.answer, res.err)
	}
	if len(h.boxed) != 2 {
		t.Errorf("sandboxed %q", h.boxed)
	}
	bad := &fakeHost{boxErr: errors.New("bwrap is not installed there")}
	if res := runShadow(t.Context(), hostDeps(bad, nil), task, prof, "q", time.Minute); res.err == nil || !strings.Contains(res.err.Error(), "its sandbox on host h: bwrap is not installed there") || len(bad.ran) != 0 {
		t.Errorf("no sandbox there: %v, ran %q", res.err, bad.ran)
	}
}

// TestShadowThereRefused: the shadow of a task whose host is unknown or
// whose program is missing there is not run; nor one with no way to
// hosts. Each error says why.
func TestShadowThereRefused(t *testing.T) {
	prof := &profile.Profile{Name: "shell", Command: []string{"sh"}, Headless: []string{"sh", "-c", "echo no", "sh", "{prompt}"}}
	base := state.Task{ID: "t_there002", Agent: "shell", Dir: t.TempDir(), Tmux: state.TmuxTarget{Host: "h"}}
	elsewhere := base
	elsewhere.Tmux.Host = "nosuch"
	h := &fakeHost{}
	for _, c := range []struct {
		name string
		d    Deps
		t    *state.Task
		want string
	}{
		{"unknown host", hostDeps(h, nil), &elsewhere, "on host nosuch: no host nosuch"},
		{"no hosts", Deps{Env: fakeEnv{}}, &base, "reaches no host"},
		{"not installed", hostDeps(&fakeHost{argvErr: errors.New("not installed there")}, nil), &base, "not installed there"},
	} {
		res := runShadow(t.Context(), c.d, c.t, prof, "q", time.Minute)
		if res.err == nil || !strings.Contains(res.err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, res.err, c.want)
		}
	}
	if len(h.ran) != 0 {
		t.Errorf("ran %q", h.ran)
	}
}
