package proctree

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	p, ok := readStat(pid)
	return ok && p.State != 'Z'
}

// startTree starts sh with the marker in its environment; it forks a
// background child, a setsid child and a double-forked setsid grandchild
// (reparented away from sh), and writes their pids to a file.
func startTree(t *testing.T, marker string) (*exec.Cmd, []int) {
	t.Helper()
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	script := `sleep 600 & echo "bg $!" >> "$1"
setsid sleep 600 & echo "sid $!" >> "$1"
( setsid sh -c 'echo "dbl $$" >> "$1"; exec sleep 600' sh "$1" & )
echo "sh $$" >> "$1"
wait`
	cmd := exec.Command("sh", "-c", script, "sh", pids)
	cmd.Env = append(os.Environ(), "PROCTREE_TEST="+marker)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := clock.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(pids)
		if f := strings.Fields(string(b)); len(f) == 8 {
			// In a fixed order: bg, sid, dbl, sh.
			out := make([]int, 4)
			for i := 0; i < len(f); i += 2 {
				n, _ := strconv.Atoi(f[i+1])
				out[slices.Index([]string{"bg", "sid", "dbl", "sh"}, f[i])] = n
			}
			return cmd, out
		}
		if clock.Now().After(deadline) {
			t.Fatalf("the tree did not start: pids file %q", b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestEndTakesSetsidAndReparented(t *testing.T) {
	marker := strconv.Itoa(os.Getpid()) + "-" + t.Name()
	cmd, pids := startTree(t, marker)
	root := cmd.Process.Pid
	for _, p := range pids {
		if !alive(p) {
			t.Fatalf("pid %d is not running before End", p)
		}
	}
	tab, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	// The double-forked grandchild is not below sh any more: only the
	// marker finds it.
	if slices.Contains(tab.Descendants(root), pids[2]) {
		t.Fatalf("pid %d is still below %d; the test does not test the marker", pids[2], root)
	}
	pick := func(t *Table) []int {
		var out []int
		for pid := range t.Procs {
			if v, _ := t.Env(pid, "PROCTREE_TEST"); v == marker {
				out = append(out, pid)
			}
		}
		return append(out, t.Descendants(root)...)
	}
	ended, err := End(context.Background(), pick, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pids {
		if alive(p) {
			t.Errorf("pid %d survived End (ended: %v)", p, ended)
		}
	}
	if len(ended) < 4 {
		t.Errorf("End reported %d processes, want at least 4: %v", len(ended), ended)
	}
}

func TestEndSparesItself(t *testing.T) {
	self := os.Getpid()
	ended, err := End(context.Background(), func(t *Table) []int { return t.Ancestors(self) }, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(ended) != 0 {
		t.Fatalf("End signalled this process or its ancestors: %v", ended)
	}
	if err := syscall.Kill(self, 0); err != nil {
		t.Fatal(err)
	}
}

func TestSessionNeedsItsLeader(t *testing.T) {
	tab, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	p := tab.Procs[os.Getpid()]
	if p.SID != p.PID {
		// This process is not a session leader: its pid names no session.
		if got := tab.Session(p.PID); got != nil {
			t.Fatalf("Session(%d) = %v for a pid that leads no session", p.PID, got)
		}
	}
	if got := tab.Session(p.SID); p.SID > 0 && tab.Procs[p.SID].SID == p.SID && !slices.Contains(got, p.PID) {
		t.Fatalf("Session(%d) = %v, misses this process", p.SID, got)
	}
}

// TestDescendantsFenceTmuxServers: a tmux server below a task's process
// (one its pane started) and that server's panes are not the task's.
func TestDescendantsFenceTmuxServers(t *testing.T) {
	tab := &Table{Procs: map[int]Proc{}, children: map[int][]int{}, env: map[int][]string{}}
	add := func(pid, ppid int, comm string) {
		tab.Procs[pid] = Proc{PID: pid, PPID: ppid, Comm: comm, State: 'S', UID: os.Getuid()}
		tab.children[ppid] = append(tab.children[ppid], pid)
	}
	add(10, 1, "bash")          // the task's pane
	add(11, 10, "sleep")        // its child
	add(12, 10, TmuxServerComm) // a server the pane started
	add(13, 12, "claude")       // another task's agent in it
	add(14, 13, "node")
	if got, want := tab.Descendants(10), []int{10, 11}; !slices.Equal(got, want) {
		t.Errorf("Descendants(10) = %v, want %v", got, want)
	}
	if tab.TmuxServerOf(14) != 12 || tab.TmuxServerOf(11) != 0 || tab.TmuxServerOf(12) != 0 {
		t.Errorf("TmuxServerOf: 14 %d, 11 %d, 12 %d; want 12, 0, 0", tab.TmuxServerOf(14), tab.TmuxServerOf(11), tab.TmuxServerOf(12))
	}
}

// TestEndOnlyOurs: End signals neither another user's process nor a tmux
// server, whatever the picker says, and Endable (what gc --dry-run lists)
// leaves them out too.
func TestEndOnlyOurs(t *testing.T) {
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pid := cmd.Process.Pid
	for _, tc := range []struct {
		name  string
		alter func(*Proc)
	}{
		{"another user's", func(p *Proc) { p.UID = os.Getuid() + 1 }},
		{"a tmux server", func(p *Proc) { p.Comm = TmuxServerComm }},
	} {
		pick := func(tab *Table) []int {
			p := tab.Procs[pid]
			tc.alter(&p)
			tab.Procs[pid] = p
			return []int{pid}
		}
		tab, err := Read()
		if err != nil {
			t.Fatal(err)
		}
		if got := Endable(tab, pick); len(got) != 0 {
			t.Errorf("%s: Endable = %v, want none", tc.name, got)
		}
		ended, err := End(t.Context(), pick, 100*time.Millisecond)
		if err != nil || len(ended) != 0 || !alive(pid) {
			t.Errorf("%s: End ended %v (err %v), alive %v", tc.name, ended, err, alive(pid))
		}
	}
	// Ours: endable, and ended, through its pidfd.
	tab, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	if got := Endable(tab, func(*Table) []int { return []int{pid, os.Getpid()} }); len(got) != 1 || got[0].PID != pid {
		t.Errorf("Endable(our sleep, this test) = %v, want the sleep alone", got)
	}
	ended, err := End(t.Context(), func(*Table) []int { return []int{pid} }, time.Second)
	if err != nil || len(ended) != 1 {
		t.Fatalf("End of our own sleep: %v %v", ended, err)
	}
}

// TestIdentity: a live process keeps its identity; a pid given another's
// identity (a reused pid, a reboot) is not that process.
func TestIdentity(t *testing.T) {
	self := os.Getpid()
	id := Identity(self)
	if id == "" || Identity(self) != id {
		t.Fatalf("Identity(self) = %q, then %q", id, Identity(self))
	}
	if !AliveAs(self, id) || !AliveAs(self, "") {
		t.Fatal("this process is not alive as itself")
	}
	if AliveAs(self, "other-boot:12345") {
		t.Fatal("a pid with another identity counts as the recorded process")
	}
	if AliveAs(0, "") || Identity(-1) != "" {
		t.Fatal("pid 0 or -1 is alive")
	}
}
