// Package proctree finds and ends the processes a task started, from the
// system's process table (internal/procinfo: /proc on Linux, sysctl on
// macOS). Of the module it imports only that seam and internal/clock.
//
// A task's processes are found three ways, because each alone misses some:
//
//   - the descendants of the pane's process (tmux's child), which catch
//     every child that kept its parent, also one that called setsid or
//     scrubbed its environment;
//   - the members of the pane's session (the pane's process is a session
//     leader), which catch a double-forked child that kept the session;
//   - an environment marker (RUNNER_TASK_ID and RUNNER_STATE_DIR, set in
//     every pane and inherited by every program started from it, whatever
//     it does with its parent, process group or session), which catch the
//     daemons that leave the tree for good: Codex's app-server started
//     without --no-daemon, Gemini's node children after its window is
//     closed. The environment read is the one the program was started
//     with, so a later unsetenv does not hide it.
//
// Then everything below a process found is taken too. Ending is freeze
// first (SIGSTOP, repeated until a scan finds nothing new, so a process
// that forks meanwhile does not get away), then SIGTERM, SIGHUP and
// SIGCONT, a grace period, and SIGKILL for what is left.
package proctree

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/procinfo"
)

// ErrUnsupported is returned where the process table cannot be read.
var ErrUnsupported = procinfo.ErrUnsupported

// Proc is one process of the table.
type Proc = procinfo.Proc

// Table is a snapshot of the process table.
type Table struct {
	Procs    map[int]Proc
	children map[int][]int
	env      map[int][]string
}

// Read takes a snapshot of the process table. Processes that vanish while
// it reads are left out.
func Read() (*Table, error) {
	procs, err := procinfo.All()
	if err != nil {
		return nil, err
	}
	t := &Table{Procs: make(map[int]Proc, len(procs)), children: map[int][]int{}, env: map[int][]string{}}
	for _, p := range procs {
		t.Procs[p.PID] = p
		t.children[p.PPID] = append(t.children[p.PPID], p.PID)
	}
	return t, nil
}

// readStat reads one process afresh.
func readStat(pid int) (Proc, bool) { return procinfo.Get(pid) }

// Env returns the value of key in the environment pid was started with
// (empty and false when unreadable: another user's process, or gone).
func (t *Table) Env(pid int, key string) (string, bool) {
	env, ok := t.env[pid]
	if !ok {
		env, _ = procinfo.Environ(pid)
		t.env[pid] = env
	}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// Descendants returns roots (those in the table) and every process below
// them, parents first. It never walks through a tmux server (one a task
// started is not the task's: its panes belong to others), nor takes one.
func (t *Table) Descendants(roots ...int) []int {
	var out []int
	seen := map[int]bool{}
	queue := append([]int(nil), roots...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		if p, ok := t.Procs[pid]; !ok || IsTmuxServer(p) {
			continue
		}
		out = append(out, pid)
		queue = append(queue, t.children[pid]...)
	}
	return out
}

// Session returns the members of session sid, when its leader sid is alive
// and still leads it (so a reused pid is not taken for the pane).
func (t *Table) Session(sid int) []int {
	if l, ok := t.Procs[sid]; !ok || l.SID != sid || l.State == 'Z' {
		return nil
	}
	var out []int
	for pid, p := range t.Procs {
		if p.SID == sid {
			out = append(out, pid)
		}
	}
	slices.Sort(out)
	return out
}

// TmuxServerOf returns the nearest tmux server among pid's ancestors (0
// when none): pid is then a pane of that server (or a pipe or hook it
// runs), which inherits the server's environment, whoever started that
// server.
func (t *Table) TmuxServerOf(pid int) int {
	for _, a := range t.Ancestors(pid)[1:] {
		if p, ok := t.Procs[a]; ok && IsTmuxServer(p) {
			return a
		}
	}
	return 0
}

// Ancestors returns pid and its ancestors.
func (t *Table) Ancestors(pid int) []int {
	var out []int
	for pid > 0 && !slices.Contains(out, pid) {
		out = append(out, pid)
		p, ok := t.Procs[pid]
		if !ok {
			break
		}
		pid = p.PPID
	}
	return out
}

// Picker chooses, in a fresh table, the processes to end.
type Picker func(*Table) []int

// Ended is what End did to one process.
type Ended struct {
	PID    int    `json:"pid"`
	Comm   string `json:"comm"`
	Signal string `json:"signal"` // "TERM" (it left on SIGTERM/SIGHUP) or "KILL"
}

// End ends the processes pick chooses: they are frozen (SIGSTOP) until a
// fresh table shows nothing new, then sent SIGTERM, SIGHUP and SIGCONT;
// those still there after grace get SIGKILL (and pick is asked once more,
// for anything born meanwhile). Only this user's processes are signalled,
// never a tmux server, never this process or its ancestors, and each
// through a pidfd taken when it was frozen, so a signal never reaches a
// process that got a pid after its owner exited. Zombies count as gone.
// It returns what it ended.
func End(ctx context.Context, pick Picker, grace time.Duration) ([]Ended, error) {
	frozen := map[int]*target{}
	defer func() {
		for _, t := range frozen {
			t.close()
		}
	}()
	order, err := freeze(pick, frozen)
	if err != nil {
		return nil, err
	}
	for _, pid := range order {
		// SIGHUP too: an interactive shell ignores SIGTERM.
		tg := frozen[pid]
		_ = tg.signal(syscall.SIGTERM)
		_ = tg.signal(syscall.SIGHUP)
		_ = tg.signal(syscall.SIGCONT)
	}
	gone := func(pid int) bool {
		p, ok := readStat(pid)
		return !ok || p.State == 'Z' || p.Start != frozen[pid].Start
	}
	deadline := clock.Now().Add(grace)
	for slices.ContainsFunc(order, func(pid int) bool { return !gone(pid) }) && clock.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	out := make([]Ended, 0, len(order))
	for _, pid := range order {
		sig := "TERM"
		if !gone(pid) {
			_ = frozen[pid].signal(syscall.SIGKILL)
			sig = "KILL"
		}
		out = append(out, Ended{PID: pid, Comm: frozen[pid].Comm, Signal: sig})
	}
	// Anything born between the last scan and now (a TERM handler that
	// forks) is killed outright.
	if t, err := Read(); err == nil {
		for _, p := range unfrozen(t, pick, frozen) {
			if tg, ok := take(p); ok {
				if tg.signal(syscall.SIGKILL) == nil {
					out = append(out, Ended{PID: p.PID, Comm: p.Comm, Signal: "KILL"})
				}
				tg.close()
			}
		}
	}
	// Wait (briefly) until the killed are gone, so a caller's check right
	// after sees them gone.
	for end := clock.Now().Add(2 * time.Second); clock.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if !slices.ContainsFunc(out, func(e Ended) bool { p, ok := readStat(e.PID); return ok && p.State != 'Z' }) {
			break
		}
	}
	return out, nil
}

// freeze stops (SIGSTOP) what pick finds, again until a fresh table shows
// nothing new (a child forked between two scans is caught by the next),
// keeping each one's pidfd in frozen; it returns their pids in order.
func freeze(pick Picker, frozen map[int]*target) ([]int, error) {
	var order []int
	for round := 0; round < 10; round++ {
		t, err := Read()
		if err != nil {
			return order, err
		}
		more := false
		for _, p := range unfrozen(t, pick, frozen) {
			tg, ok := take(p)
			if !ok {
				continue // gone
			}
			if err := tg.signal(syscall.SIGSTOP); err != nil {
				tg.close()
				continue // gone, or not ours
			}
			if old := frozen[p.PID]; old != nil {
				old.close()
			}
			frozen[p.PID] = tg
			order = append(order, p.PID)
			more = true
		}
		if !more {
			break
		}
	}
	return order, nil
}

// unfrozen returns the processes Endable takes from what pick finds in t
// that are not in frozen (the same pid started again counts as new).
func unfrozen(t *Table, pick Picker, frozen map[int]*target) []Proc {
	var out []Proc
	for _, p := range Endable(t, pick) {
		if q, ok := frozen[p.PID]; ok && q.Start == p.Start {
			continue
		}
		out = append(out, p)
	}
	return out
}

// Endable returns the processes End takes of those pick finds in t: the
// live ones of this user, never a tmux server, this process or its
// ancestors. It is End's one rule, so a dry run (gc --dry-run) lists what
// a real run ends and spares what it spares.
func Endable(t *Table, pick Picker) []Proc {
	skip := t.Ancestors(os.Getpid())
	uid := os.Getuid()
	var out []Proc
	for _, pid := range pick(t) {
		p, ok := t.Procs[pid]
		if !ok || p.State == 'Z' || slices.Contains(skip, pid) || p.UID != uid || IsTmuxServer(p) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// Alive reports whether pid is a live process. A zombie is dead: a killed
// process whose parent (init in a container that does not reap) never waits
// for it stays a zombie, and kill(pid, 0) still succeeds. A zombie is one
// whose every thread exited (procinfo.Get): a first thread that exited
// while the others still run (and hold its files and locks) is not.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	p, ok := readStat(pid)
	return !ok || p.State != 'Z'
}
