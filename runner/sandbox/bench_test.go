package sandbox

import (
	"os/exec"
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
	boxed := Argv(bwrap, []string{dir}, []string{dir, dir + "/state", "/tmp/tmux-0/runner"}, plain)
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
