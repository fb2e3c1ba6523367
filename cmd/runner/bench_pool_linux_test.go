package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/sshtest"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/runner/sandbox"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// BenchmarkPool is issue 53's pool on one machine: RUNNER_BENCH_POOL_HOSTS
// loopback hosts (8; each a real sshd with its own tmux server and files),
// RUNNER_BENCH_POOL_MAX agents at most on each (20), RUNNER_BENCH_POOL_AGENTS sim
// agents dispatched to --host any at once (200), each sleeping
// RUNNER_BENCH_POOL_SLEEP (20s); the last host's sshd is killed mid-run. It
// reports the placement's spread and the most agents seen on a host at
// once (never over its maximum: checked), the ssh connections per host,
// the local supervisors' memory and CPU, a pool dispatch's time against a
// local one's (interleaved before the burst), how long the killed host's
// tasks took to be orphaned, how every task ended (the rest done), and a
// group of 3 across the hosts left, picked and merged here (poolGroup).
// Run it alone: go test -run '^$' -bench BenchmarkPool -benchtime 1x
// -timeout 30m ./cmd/runner.
func BenchmarkPool(b *testing.B) {
	r := newBenchRig(b)
	ctx := context.Background()
	nHosts, nAgents, maxPer := envInt("RUNNER_BENCH_POOL_HOSTS", 8), envInt("RUNNER_BENCH_POOL_AGENTS", 200), envInt("RUNNER_BENCH_POOL_MAX", 20)
	sleep := envInt("RUNNER_BENCH_POOL_SLEEP", 20)
	srvs := startPoolHosts(b, r, nHosts, maxPer)
	srv := filepath.Join(r.dir, "srv") // not a repository: no snapshot
	if err := os.Mkdir(srv, 0o700); err != nil {
		b.Fatal(err)
	}
	if _, err := r.runner(ctx, "host", "ls"); err != nil { // the probes
		b.Fatal(err)
	}
	// A foreground dispatch to the pool against one here, interleaved.
	var local, pool []time.Duration
	for i := 0; i < 5; i++ {
		for _, h := range []string{"local", "any"} {
			t0 := clock.Now()
			if _, err := r.runner(ctx, "dispatch", "--host", h, srv, "--agent", "sim", "--awareness", "off", "say hi"); err != nil {
				b.Fatal(err)
			}
			if h == "local" {
				local = append(local, clock.Since(t0))
			} else {
				pool = append(pool, clock.Since(t0))
			}
		}
	}
	b.Logf("foreground dispatch 'say hi', median of 5: here %v, to the pool %v (%.2fx)", poolMedian(local).Round(time.Millisecond),
		poolMedian(pool).Round(time.Millisecond), float64(poolMedian(pool))/float64(poolMedian(local)))

	smp := &poolSampler{r: r, srvs: srvs, maxUse: map[string]int{}, cpu: map[int]float64{}}
	stopSampling := smp.start(b)
	// The last host is killed once a quarter of its slots run (or any,
	// 20 s on), beside the burst: on a quick machine the pool never held
	// half a host's slots at once, and after the burst its tasks had all
	// ended (CI saw none).
	lost := fmt.Sprintf("h%d", nHosts)
	killed := make(chan lostHost, 1)
	go func() {
		on, err := waitRunningOn(r, lost, max(1, maxPer/4), 5*time.Minute)
		k := lostHost{on: on, err: err}
		if err == nil {
			srvs[nHosts-1].Stop()
			k.at = clock.Now()
			// Watched from the kill on, beside the burst (looked at
			// after it, the figure was the burst's length: 41 s where
			// every task had left the host by 10 s).
			k.offIn, k.last, k.err = waitOrphaned(r, on, lost, k.at, 120*time.Second)
		}
		killed <- k
	}()
	ids, walls := burst(b, r, srv, nAgents, sleep)
	b.Logf("%d detached dispatches to --host any (16 at once): median %v, slowest %v", len(ids), poolMedian(walls).Round(time.Millisecond), slices.Max(walls).Round(time.Millisecond))
	k := <-killed
	if k.err != nil {
		b.Fatal(k.err)
	}
	logLastOff(b, r, k.last, k.at, k.offIn)
	if os.Getenv("RUNNER_BENCH_POOL_GATE") != "" && k.offIn > poolLostBound {
		// Issue 53's promise, held in CI (.ci/run): the bound by
		// construction is 11 s for a killed host (docs/remote.md).
		b.Errorf("the killed host's tasks were all off it only %v after the kill: over the %v promised", k.offIn.Round(100*time.Millisecond), poolLostBound)
	}
	b.Logf("host %s's sshd killed with %d tasks there: the last off it (orphaned, or placed again) %v after the kill; %s", lost, len(k.on),
		k.offIn.Round(100*time.Millisecond), lostWays(b, r, k))

	ends := waitAllEnded(b, r, ids, time.Duration(nAgents*sleep)*time.Second/time.Duration(nHosts*maxPer/2)+5*time.Minute)
	stopSampling()
	smp.report(b, maxPer)
	b.Logf("how the %d tasks ended: %v", len(ids), ends)
	spread := map[string]int{}
	for _, id := range ids {
		spread[r.task(b, id).Tmux.Host]++
	}
	b.Logf("placed, by host (whole run): %v", spread)
	group := poolGroup(b, r) // a group of 3 across hosts, picked and merged here
	door := ""
	if _, err := sandbox.Check(ctx); err == nil {
		door = poolDoor(b, r, srv) // a sandboxed agent on a pool host messages its parent
	} else if os.Getenv("RUNNER_BENCH_POOL_GATE") != "" {
		b.Errorf("the door on a pool host not tried: %v", err)
	} else {
		door = fmt.Sprintf("the door on a pool host not tried: %v", err)
	}
	b.Logf("%s; %s", group, door)
	if ends[string(state.StatusFailed)] > 0 {
		b.Errorf("%d tasks failed: %s", ends[string(state.StatusFailed)], strings.Join(failedReasons(b, r, ids), "; "))
	}
}

// startPoolHosts starts n sshds (MaxSessions 300: every task's stream
// and every supervisor's shell share the host's one connection) and
// registers them as h1…hN with --max-agents maxPer.
func startPoolHosts(b *testing.B, r *benchRig, n, maxPer int) []*sshtest.Server {
	sshd := sshtest.Sshd()
	if sshd == "" {
		b.Skip("sshd not installed")
	}
	var srvs []*sshtest.Server
	for i := 1; i <= n; i++ {
		dir := filepath.Join(r.dir, "sshd"+strconv.Itoa(i))
		if err := os.Mkdir(dir, 0o700); err != nil {
			b.Fatal(err)
		}
		s, err := sshtest.StartInWith(sshd, dir, "MaxSessions 300\nMaxStartups 100\n")
		if err != nil {
			b.Fatal(err)
		}
		srvs = append(srvs, s)
		name, sock := "h"+strconv.Itoa(i), filepath.Join(r.dir, "rs"+strconv.Itoa(i))
		b.Cleanup(func() {
			_ = tmuxctl.New(sock).KillServer(context.Background())
			_, _ = r.runner(context.Background(), "host", "rm", name)
			s.Stop()
		})
		if _, err := r.runner(context.Background(), "host", "add", name, sshtest.Alias, "--ssh-arg", "-F", "--ssh-arg", s.Config,
			"--runner", r.bin, "--socket", sock, "--dir", filepath.Join(r.dir, "there"+strconv.Itoa(i)),
			"--max-agents", strconv.Itoa(maxPer), "--label", "pool"); err != nil {
			b.Fatal(err)
		}
	}
	return srvs
}

// burst dispatches n detached sim tasks to the pool, 16 at once, and
// returns their ids and each dispatch's time.
func burst(b *testing.B, r *benchRig, dir string, n, sleep int) ([]string, []time.Duration) {
	task := fmt.Sprintf("sleep %ds\nsay done", sleep)
	ids := make([]string, n)
	walls := make([]time.Duration, n)
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			t0 := clock.Now()
			out, err := r.runner(context.Background(), "dispatch", "--host", "any", dir, "--detach", "--agent", "sim", "--awareness", "off",
				"--ready-timeout", "5m", "--timeout", "30m", task)
			walls[i] = clock.Since(t0)
			ids[i] = strings.TrimSpace(out)
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		b.Fatalf("%d dispatches failed, the first: %v", len(errs), errs[0])
	}
	return ids, walls
}

// poolLostBound is how soon every task of a killed host must be off it
// (orphaned, ended or placed again) with RUNNER_BENCH_POOL_GATE set:
// issue 53's 30 s.
const poolLostBound = 30 * time.Second

// lostHost is the host killed mid-run: the tasks active there then, and
// when.
type lostHost struct {
	on    []string
	at    time.Time
	offIn time.Duration // when the last of on was seen off the host
	last  string        // that task
	err   error
}

// waitRunningOn waits until n tasks run on host (or, 20 s on, at least
// one) and returns the active tasks placed there
// then. It runs beside the burst: an error, never a b.Fatal.
func waitRunningOn(r *benchRig, host string, n int, limit time.Duration) ([]string, error) {
	st, err := state.Open(r.stateDir)
	if err != nil {
		return nil, err
	}
	start := clock.Now()
	for deadline := start.Add(limit); clock.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		s, err := st.Read(context.Background())
		if err != nil {
			return nil, err
		}
		var on []string
		running := 0
		for _, t := range s.Tasks {
			if t.Tmux.Host == host && t.Status.IsActive() {
				on = append(on, t.ID)
				if t.Status == state.StatusRunning {
					running++
				}
			}
		}
		if running >= n || running > 0 && clock.Since(start) > 20*time.Second {
			return on, nil
		}
	}
	return nil, fmt.Errorf("no task runs on %s after %v", host, limit)
}

// waitOrphaned waits until no task of ids is active on host (each
// orphaned, ended, or placed again on another host of the pool) and
// returns how long that took from t0 (the kill) and the last task seen
// off it. It runs beside the burst: an error, never a b.Fatal.
func waitOrphaned(r *benchRig, ids []string, host string, t0 time.Time, limit time.Duration) (time.Duration, string, error) {
	st, err := state.Open(r.stateDir)
	if err != nil {
		return 0, "", err
	}
	seen := map[string]bool{}
	last := ""
	for clock.Since(t0) < limit {
		s, err := st.Read(context.Background())
		if err != nil {
			return 0, "", err
		}
		left := 0
		for _, id := range ids {
			if t := s.Tasks[id]; t != nil && t.Status.IsActive() && t.Tmux.Host == host {
				left++
			} else if !seen[id] {
				seen[id], last = true, id
			}
		}
		if left == 0 {
			return clock.Since(t0), last, nil
		}
		time.Sleep(250 * time.Millisecond)
	}
	return 0, "", fmt.Errorf("tasks of the killed host still active after %v", limit)
}

// logLastOff logs task id, the last seen off the killed host: its status
// changes after the kill (as recorded, from t0) against when a reader here
// saw it off, and its supervisor log's warnings and errors (the state
// writes it retried).
func logLastOff(b *testing.B, r *benchRig, id string, t0 time.Time, seen time.Duration) {
	if id == "" {
		return
	}
	t := r.task(b, id)
	var hist []string
	for _, h := range t.History {
		if !h.Time.Before(t0) {
			hist = append(hist, fmt.Sprintf("%s at %v", h.Status, h.Time.Sub(t0).Round(100*time.Millisecond)))
		}
	}
	var warns []string
	data, _ := os.ReadFile(filepath.Join(r.stateDir, "logs", id+".supervisor.log"))
	for _, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, `"level":"WARN"`) || strings.Contains(l, `"level":"ERROR"`) || strings.HasPrefix(l, "state-trace") {
			warns = append(warns, textutil.Headline(l, 300))
		}
	}
	if len(warns) > 8 {
		warns = warns[len(warns)-8:]
	}
	b.Logf("the last off the host: %s, seen %v after the kill; recorded: %s; its supervisor's warnings: %s", id, seen.Round(100*time.Millisecond), strings.Join(hist, ", "), strings.Join(warns, " | "))
}

// lostWays says, on one line (a benchmark's output is cut at 10), how
// the killed host's tasks left it: orphaned by the stream's lost-timer,
// by the probe after a tmux call failed, or as a supervisor or an agent
// started; placed again; failed (which must not be); and the slowest
// orphaning after the kill.
func lostWays(b *testing.B, r *benchRig, k lostHost) string {
	ways := map[string]int{}
	var slowest time.Duration
	slowWhy := ""
	for _, id := range k.on {
		t := r.task(b, id)
		for _, h := range t.History {
			if h.Time.Before(k.at) || (h.Status != state.StatusOrphaned && h.Status != state.StatusFailed && !strings.Contains(h.Reason, "placed again")) {
				continue
			}
			way := string(h.Status)
			switch {
			case strings.Contains(h.Reason, "placed again"):
				way = "placed again"
			case strings.Contains(h.Reason, "the supervisor could not start"), strings.Contains(h.Reason, "as its agent started"):
				way += " at its start"
			case strings.Contains(h.Reason, "(while: "):
				way += " by the probe"
			case strings.Contains(h.Reason, "was lost for"):
				way += " by the stream's timer"
			}
			ways[way]++
			if d := h.Time.Sub(k.at); h.Status == state.StatusOrphaned && d > slowest {
				slowest, slowWhy = d, textutil.Headline(h.Reason, 160)
			}
			break
		}
	}
	return fmt.Sprintf("%v; the slowest orphaned %v after the kill: %s", ways, slowest.Round(100*time.Millisecond), slowWhy)
}

// waitAllEnded waits until no task of ids is active and counts how each
// ended.
func waitAllEnded(b *testing.B, r *benchRig, ids []string, limit time.Duration) map[string]int {
	t0 := clock.Now()
	for {
		st := r.readState(b)
		ends, active := map[string]int{}, 0
		for _, id := range ids {
			t := st.Tasks[id]
			if t == nil {
				ends["gone"]++
				continue
			}
			ends[string(t.Status)]++
			if t.Status.IsActive() {
				active++
			}
		}
		if active == 0 {
			return ends
		}
		if clock.Since(t0) > limit {
			b.Fatalf("%d tasks still active after %v: %v", active, limit, ends)
		}
		time.Sleep(time.Second)
	}
}

// poolSampler samples, every second, the agents on each host (the most
// seen), the ssh connections to each host's port, and the local
// supervisors' memory and CPU.
type poolSampler struct {
	r          *benchRig
	srvs       []*sshtest.Server
	mu         sync.Mutex
	maxUse     map[string]int
	maxConns   []int
	maxSup     int
	maxRSS     int64           // kB, all supervisors together
	cpu        map[int]float64 // seconds, by supervisor pid (the last seen)
	rssPerSup  []int64
	maxQueued  int
	overflowed []string
}

func (s *poolSampler) start(b *testing.B) func() {
	s.maxConns = make([]int, len(s.srvs))
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			s.sample(b)
			select {
			case <-done:
				return
			case <-time.After(time.Second):
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

func (s *poolSampler) sample(b *testing.B) {
	st, err := state.Open(s.r.stateDir)
	if err != nil {
		return
	}
	snap, err := st.Read(context.Background())
	if err != nil {
		return
	}
	all, _ := st.Hosts(context.Background())
	s.mu.Lock()
	defer s.mu.Unlock()
	queued := 0
	for name, n := range hosts.Use(snap) {
		s.maxUse[name] = max(s.maxUse[name], n)
		if h := all[name]; h != nil && n > h.Capacity() {
			s.overflowed = append(s.overflowed, fmt.Sprintf("%s %d/%d", name, n, h.Capacity()))
		}
	}
	for _, t := range snap.Tasks {
		if t.Status == state.StatusQueued && t.Tmux.Host == "" {
			queued++
		}
	}
	s.maxQueued = max(s.maxQueued, queued)
	for i, srv := range s.srvs {
		out, _ := exec.Command("ss", "-tnH", "state", "established", "( dport = :"+strconv.Itoa(srv.Port)+" )").Output()
		s.maxConns[i] = max(s.maxConns[i], bytes.Count(out, []byte("\n")))
	}
	var rss int64
	sups := 0
	for _, t := range snap.Tasks {
		pid := t.SupervisorPID
		if pid <= 0 || !t.Status.IsActive() {
			continue
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
		if len(f) < 22 {
			continue
		}
		ut, _ := strconv.ParseFloat(f[11], 64)
		stt, _ := strconv.ParseFloat(f[12], 64)
		pages, _ := strconv.ParseInt(f[21], 10, 64)
		s.cpu[pid] = (ut + stt) / 100 // USER_HZ
		rss += pages * int64(os.Getpagesize()) / 1024
		s.rssPerSup = append(s.rssPerSup, pages*int64(os.Getpagesize())/1024)
		sups++
	}
	if rss > s.maxRSS {
		s.maxRSS, s.maxSup = rss, sups
	}
}

func (s *poolSampler) report(b *testing.B, maxPer int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b.Logf("most agents seen on each host at once (max %d): %v; most tasks queued and not placed yet at once: %d", maxPer, s.maxUse, s.maxQueued)
	if len(s.overflowed) > 0 {
		b.Errorf("a host over its maximum: %v", s.overflowed[:min(5, len(s.overflowed))])
	}
	b.Logf("established ssh (TCP) connections to each host's sshd, most seen: %v", s.maxConns)
	var total float64
	for _, c := range s.cpu {
		total += c
	}
	sort.Slice(s.rssPerSup, func(i, j int) bool { return s.rssPerSup[i] < s.rssPerSup[j] })
	med := int64(0) // kB
	if len(s.rssPerSup) > 0 {
		med = s.rssPerSup[len(s.rssPerSup)/2]
	}
	b.Logf("local supervisors: most RSS together %d MiB (%d supervisors; median %d MiB each), CPU %.1f s in all for %d supervisors seen (%.2f s each)",
		s.maxRSS/1024, s.maxSup, med/1024, total, len(s.cpu), total/float64(max(1, len(s.cpu))))
}

// poolMedian is the median of ds (0 for none).
func poolMedian(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
