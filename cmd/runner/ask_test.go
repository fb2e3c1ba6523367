package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runner-cli/runner/cmd/runner/exitcode"
	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/ask"
	"github.com/runner-cli/runner/runner/profile"

	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// post records the messages Ask posts; fail makes every post fail.
type post struct {
	mu   sync.Mutex
	got  []string // "TASK TYPE TEXT"
	fail error
}

func (p *post) fn(_ context.Context, to *state.Task, typ, text string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got = append(p.got, to.ID+" "+typ+" "+text)
	return p.fail
}

// askEnv is an Env on a fresh state dir whose tasks are running records
// (supervised by this process, so reconcile keeps them) with no panes; the
// tmux server does not exist, so nothing can touch a pane. agents gives
// each task's agent; ids are returned in order.
func askEnv(t *testing.T, agents ...string) (*runner.Env, []string) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	store, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := &runner.Env{Store: store, TC: tmuxctl.New(filepath.Join(t.TempDir(), "no-server")),
		Profiles: profile.Builtins(), Getenv: os.Getenv, Exe: filepath.Join(selfAsRunner(t), "runner")}
	var ids []string
	dir := t.TempDir()
	now := clock.Now()
	err = store.Update(context.Background(), func(s *state.State) error {
		for i, a := range agents {
			id := fmt.Sprintf("t_ask%05d", i)
			s.Tasks[id] = &state.Task{ID: id, Agent: a, Dir: dir, Text: "work on part " + strconv.Itoa(i),
				Status: state.StatusRunning, SupervisorPID: os.Getpid(), Created: now.Add(time.Duration(i) * time.Millisecond)}
			ids = append(ids, id)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return env, ids
}

// TestAskParallel: 4 shadows that each sleep 1s take about as long as one,
// not four times as long (measured against one in the same test).
func TestAskParallel(t *testing.T) {
	env, ids := askEnv(t, "sim", "sim", "sim", "sim")
	p := &post{}
	run := func(targets []string, n int) (time.Duration, []ask.Answer) {
		var arrived []string
		start := clock.Now()
		as, err := ask.Run(context.Background(), askDeps(env), ask.Request{Targets: targets,
			Question: "sleep 1s\nsay the answer is 42", Timeout: 30 * time.Second, Post: p.fn,
			OnAnswer: func(a ask.Answer) { arrived = append(arrived, a.Task) }})
		took := clock.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		if len(arrived) != n || len(as) != n {
			t.Errorf("OnAnswer called for %v, %d answers: want %d", arrived, len(as), n)
		}
		return took, as
	}
	one, _ := run(ids[:1], 1)
	four, as := run([]string{"@all"}, 4)
	t.Logf("one shadow %v, four %v (%.2fx)", one, four, float64(four)/float64(one))
	if float64(four) > 2.5*float64(one) {
		t.Errorf("4 shadows took %v, over 2.5x one (%v): not run in parallel", four, one)
	}
	for i, a := range as {
		if a.Task != ids[i] || a.Mode != ask.ModeShadow || !a.OK() || a.Exit == nil || *a.Exit != 0 || a.ElapsedMS < 1000 {
			t.Errorf("answer %d: %+v", i, a)
		}
		if !strings.Contains(a.Answer, "the answer is 42") || !strings.Contains(a.Answer, "shadow of agent "+a.Task) {
			t.Errorf("answer %d lacks the shadow's output: %q", i, a.Answer)
		}
	}
	// One FYI per answer, of type update, with the question and the answer.
	if len(p.got) != 5 {
		t.Fatalf("posts: %q", p.got)
	}
	for _, m := range p.got {
		if !strings.Contains(m, " update FYI") || !strings.Contains(m, "sleep 1s") || !strings.Contains(m, "the answer is 42") {
			t.Errorf("FYI %q", m)
		}
	}
}

// TestAskFailures: a shadow that exits non-zero, one that runs out of time
// (its whole process group is killed), a target without a headless mode
// (the question goes as a message) and FYIs that cannot be posted.
func TestAskFailures(t *testing.T) {
	t.Parallel() // alongside the scripts: it waits more than it computes
	env, ids := askEnv(t, "sim", "shell")
	sim, shell := ids[0], ids[1]
	ctx := context.Background()

	t.Run("failing shadow", func(t *testing.T) {
		p := &post{}
		as, err := ask.Run(ctx, askDeps(env), ask.Request{Targets: []string{sim}, Question: "say partial\nexit 3", Post: p.fn})
		if !errors.Is(err, ask.ErrFailed) || exitcode.Of(err) != 1 {
			t.Fatalf("err = %v (exit %d), want ErrAskFailed, exit 1", err, exitcode.Of(err))
		}
		a := as[0]
		if a.OK() || a.Exit == nil || *a.Exit != 3 || a.TimedOut || !strings.Contains(a.Error, "exited 3") || !strings.Contains(a.Answer, "partial") {
			t.Errorf("answer %+v", a)
		}
		if len(p.got) != 0 {
			t.Errorf("an FYI after a failed shadow: %q", p.got)
		}
	})

	t.Run("timeout kills the process group", func(t *testing.T) {
		pidFile := filepath.Join(t.TempDir(), "pid")
		p := &post{}
		q := `run sh -c "echo $$ > ` + pidFile + `; exec sleep 30"`
		as, err := ask.Run(ctx, askDeps(env), ask.Request{Targets: []string{sim}, Question: q, Timeout: 4 * time.Second, Post: p.fn})
		if !errors.Is(err, ask.ErrTimeout) || exitcode.Of(err) != 3 {
			t.Fatalf("err = %v (exit %d), want ErrAskTimeout, exit 3", err, exitcode.Of(err))
		}
		a := as[0]
		if !a.TimedOut || a.Exit != nil || a.OK() || !strings.Contains(a.Error, "within 4s") {
			t.Errorf("answer %+v", a)
		}
		b, err := os.ReadFile(pidFile)
		if err != nil {
			t.Fatalf("the shadow's grandchild never started: %v", err)
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if pid <= 1 || !waitGone(pid, 10*time.Second) {
			t.Errorf("the shadow's grandchild %d outlived the timeout", pid)
		}
		if len(p.got) != 0 {
			t.Errorf("an FYI after a timeout: %q", p.got)
		}
	})

	t.Run("no headless mode: the question as a message", func(t *testing.T) {
		p := &post{}
		as, err := ask.Run(ctx, askDeps(env), ask.Request{Targets: []string{shell, sim}, Question: "say from sim", Post: p.fn})
		if err != nil {
			t.Fatal(err)
		}
		if a := as[0]; a.Task != shell || a.Mode != ask.ModeMessage || !a.OK() || a.Answer != "" || a.Exit != nil {
			t.Errorf("shell answer %+v", a)
		}
		if a := as[1]; a.Mode != ask.ModeShadow || !strings.Contains(a.Answer, "from sim") {
			t.Errorf("sim answer %+v", a)
		}
		joined := strings.Join(p.got, "\n")
		if !strings.Contains(joined, shell+" request Question from the user") || !strings.Contains(joined, sim+" update FYI") {
			t.Errorf("posts: %q", p.got)
		}
	})

	t.Run("posting fails", func(t *testing.T) {
		p := &post{fail: errors.New("the queue of the target is full")}
		as, err := ask.Run(ctx, askDeps(env), ask.Request{Targets: []string{sim, shell}, Question: "say still answered", Post: p.fn})
		if !errors.Is(err, ask.ErrFailed) {
			t.Fatalf("err = %v: the shell target got nothing", err)
		}
		if a := as[0]; !a.OK() || !strings.Contains(a.Answer, "still answered") || !strings.Contains(a.FYIError, "the queue of the target is full") {
			t.Errorf("sim answer %+v: answered, with the FYI's error", a)
		}
		if a := as[1]; a.OK() || !strings.Contains(a.Error, "the queue of the target is full") {
			t.Errorf("shell answer %+v", a)
		}
	})

	t.Run("bad targets run nothing", func(t *testing.T) {
		p := &post{}
		_, err := ask.Run(ctx, askDeps(env), ask.Request{Targets: []string{sim, "t_nosuch"}, Question: "say x", Post: p.fn})
		if exitcode.Of(err) != 2 || len(p.got) != 0 {
			t.Errorf("err = %v (exit %d), posts %q", err, exitcode.Of(err), p.got)
		}
	})
}
