package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

// BenchmarkStartOverhead measures what the sandbox adds to starting a
// program: `true` run plain and under bwrap (with the binds a task has),
// alternately in the same run (the machine is shared), and reports the
// overhead per start. Target: under 50 ms.
func BenchmarkStartOverhead(b *testing.B) {
	bwrap, err := Check(b.Context())
	if err != nil {
		b.Skip(err)
	}
	dir := b.TempDir()
	plain := []string{"/bin/true"}
	for _, d := range []string{"proj/.git/hooks", "state/events", "state/hooks/t_1", "state/doors/t_1"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			b.Fatal(err)
		}
	}
	// The binds a task has: its folder and git directory with git's
	// files read-only, the state directory hidden with the task's
	// openings, the tmux socket covered.
	boxed := Argv(bwrap, Spec{Readable: []string{dir}, Writable: []string{dir + "/proj"}, Pinned: []string{dir + "/proj/.git"},
		Hidden: []string{dir + "/state"}, ReadOnly: []string{dir + "/proj/.git/config", dir + "/proj/.git/hooks"},
		Open: []string{dir + "/state/events/t_1.jsonl"}, OpenRO: []string{dir + "/state/hooks/t_1", dir + "/state/doors/t_1"}}, plain)
	run := func(argv []string) time.Duration {
		start := clock.Now()
		if err := exec.Command(argv[0], argv[1:]...).Run(); err != nil {
			b.Fatal(err)
		}
		return clock.Since(start)
	}
	var tPlain, tBoxed time.Duration
	for b.Loop() {
		tPlain += run(plain)
		tBoxed += run(boxed)
	}
	n := time.Duration(b.N)
	b.ReportMetric(float64((tPlain / n).Microseconds()), "plain-µs/start")
	b.ReportMetric(float64((tBoxed / n).Microseconds()), "sandboxed-µs/start")
	b.ReportMetric(float64(((tBoxed - tPlain) / n).Microseconds()), "overhead-µs/start")
	b.ReportMetric(float64(tBoxed)/float64(tPlain), "ratio")
}
