package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/state"
)

// poolGroup is BenchmarkPool's group of 3 across hosts (issue 53 §3): a
// repository here, `dispatch --host any --agents sim,sim,sim` in the
// foreground (the snapshot carried to every host that answers; the
// killed one is said and left out), compare naming the hosts, and pick
// bringing the chosen branch back and merging it here. It reports the
// wall time of each step and the hosts the candidates ran on.
func poolGroup(b *testing.B, r *benchRig) {
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
	b.Logf("a group of 3 across hosts (%s): dispatched and ended in %v (foreground), picked and merged here in %v",
		strings.Join(hosts, ", "), dispatched.Round(time.Millisecond), picked.Round(time.Millisecond))
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
