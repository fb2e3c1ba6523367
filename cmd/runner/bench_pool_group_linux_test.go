package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/state"
)

// poolGroup is BenchmarkPool's group of 3 across hosts (issue 53 §3): a
// repository here, `dispatch --host any --agents sim,sim,sim` in the
// foreground (the snapshot carried to every host that answers; the
// killed one is said and left out), compare naming the hosts, and pick
// bringing the chosen branch back and merging it here. It reports the
// wall time of each step and the hosts the candidates ran on (one line:
// a benchmark's output is cut at 10).
func poolGroup(b *testing.B, r *benchRig) string {
	ctx := context.Background()
	repo := filepath.Join(r.dir, "grouprepo")
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "user.name=b", "-c", "user.email=b@b"}, args...)...)
		cmd.Dir = repo
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if err := os.Mkdir(repo, 0o700); err != nil {
		b.Fatal(err)
	}
	git("init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("base\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	git("add", "a.txt")
	git("commit", "-q", "-m", "initial")
	t0 := clock.Now()
	out, err := r.runner(ctx, "dispatch", "--host", "any", repo, "--agents", "sim,sim,sim", "--awareness", "off",
		"--ready-timeout", "60s", "--timeout", "120s", "--json", "write group.txt hello")
	if err != nil {
		b.Fatalf("group across hosts: %v", err)
	}
	dispatched := clock.Since(t0)
	var c struct {
		Group struct {
			ID string `json:"id"`
		} `json:"group"`
		Candidates []struct {
			Task, Host string
		} `json:"candidates"`
	}
	if err := json.Unmarshal([]byte(out), &c); err != nil || len(c.Candidates) != 3 {
		b.Fatalf("group across hosts: %v: %s", err, out)
	}
	var hosts []string
	for _, x := range c.Candidates {
		if x.Host == "" {
			b.Errorf("candidate %s ran here, not on a host", x.Task)
		}
		hosts = append(hosts, x.Host)
	}
	t1 := clock.Now()
	if _, err := r.runner(ctx, "pick", c.Group.ID, "--by", "check"); err != nil {
		b.Fatalf("pick: %v", err)
	}
	picked := clock.Since(t1)
	if got := git("show", "HEAD:group.txt"); !strings.Contains(got, "hello") {
		b.Errorf("group.txt merged here: %q", got)
	}
	return fmt.Sprintf("a group of 3 across hosts (%s): dispatched and ended in %v (foreground), picked and merged here in %v",
		strings.Join(hosts, ", "), dispatched.Round(time.Millisecond), picked.Round(time.Millisecond))
}

// poolDoor is BenchmarkPool's sandboxed agent on a host (issue 53 §4): a
// shell task here dispatches a sandboxed shell child to the pool (--host
// any); the child runs runner there, which reaches its supervisor here
// through its door, forwarded over the host's connection, and messages
// its parent. The parent shell then takes the message as its next turn's
// input (which a shell cannot run: it ends failed, the message read, as
// in door_remote.txtar). It says how long that took.
func poolDoor(b *testing.B, r *benchRig, dir string) string {
	ctx := context.Background()
	child := filepath.Join(r.dir, "child.task")
	script := `R=` + r.bin + `; $R msg "$RUNNER_PARENT" "hello parent, from the pool"; echo msg=$?`
	if err := os.WriteFile(child, []byte(script+"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	t0 := clock.Now()
	out, _ := r.runner(ctx, "dispatch", dir, "--agent", "shell", "--awareness", "off", "--ready-timeout", "60s", "--timeout", "120s",
		r.bin+" dispatch --host any "+dir+" --agent shell --sandbox --awareness off --ready-timeout 60s --timeout 90s --file "+child+"; echo child=$?")
	m := regexp.MustCompile(`(t_\w+) (failed|done)`).FindStringSubmatch(out)
	if m == nil {
		b.Fatalf("the door on a pool host: the parent's dispatch said %q", out)
	}
	logs, err := r.runner(ctx, "logs", m[1])
	if err != nil {
		b.Fatal(err)
	}
	if !strings.Contains(logs, "child=0") || !strings.Contains(logs, "hello parent, from the pool") {
		b.Fatalf("the door on a pool host: the parent %s did not get its sandboxed child's message; its log:\n%s", m[1], textutil.LastLines(logs, 40))
	}
	return fmt.Sprintf("a sandboxed agent on a pool host messaged its parent here through its door (%v in all)", clock.Since(t0).Round(time.Millisecond))
}

// failedReasons are the failed tasks among ids, each with its last
// reason, so that a run that fails says why.
func failedReasons(b *testing.B, r *benchRig, ids []string) []string {
	st := r.readState(b)
	var out []string
	for _, id := range ids {
		if t := st.Tasks[id]; t != nil && t.Status == state.StatusFailed {
			out = append(out, id+" on "+t.Tmux.Host+": "+t.LastReason())
		}
	}
	return out
}
