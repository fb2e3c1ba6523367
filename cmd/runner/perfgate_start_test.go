package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

// helloWorld builds a hello-world Go program with the toolchain that
// builds runner, into dir: the baseline of a process's start.
func helloWorld(tb testing.TB, dir string) string {
	tb.Helper()
	src := filepath.Join(dir, "hello")
	if err := os.MkdirAll(src, 0o700); err != nil {
		tb.Fatal(err)
	}
	files := map[string]string{
		"go.mod":  "module hello\n\ngo 1.24\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "hello.bin")
	cmd := goBuildStatic(bin, ".")
	cmd.Dir = src
	cmd.Env = append(cmd.Env, "GOWORK=off", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("go build hello: %v\n%s", err, out)
	}
	return bin
}

// goBuildStatic is the command that builds pkg into bin as the release
// does (scripts/release.sh, the README's go install): CGO_ENABLED=0, so
// linked statically. A build with cgo (go build's default where a C
// compiler is) starts through the dynamic loader: 4.0x a hello-world's CPU
// against 3.2x for the same code on 2026-12-02 (issue 51).
func goBuildStatic(bin, pkg string) *exec.Cmd {
	// -trimpath -buildvcs=false as release.sh: .ci/run's builds have
	// compiled it all so already.
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-o", bin, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	return cmd
}

// startTimes runs `runner version` and the hello-world binary n times
// each, one after the other in turn (so that a load on the machine hits
// both alike), and returns the medians of their wall times and of their
// CPU times (user and system). The CPU times hold on a loaded machine,
// where the wall times of the bigger process suffer more (here at load
// average 20: 4.8x wall, 3.2x CPU for the same binaries).
func startTimes(tb testing.TB, runner, hello string, env []string, n int) (run, base, runCPU, baseCPU time.Duration) {
	tb.Helper()
	var r, h, rc, hc durations
	for range n {
		for _, c := range []struct {
			argv      []string
			wall, cpu *durations
		}{{[]string{runner, "version"}, &r, &rc}, {[]string{hello}, &h, &hc}} {
			cmd := exec.Command(c.argv[0], c.argv[1:]...)
			cmd.Env = env
			t0 := clock.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				tb.Fatalf("%v: %v\n%s", c.argv, err, out)
			}
			*c.wall = append(*c.wall, clock.Since(t0))
			*c.cpu = append(*c.cpu, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		}
	}
	return r.q(0.5), h.q(0.5), rc.q(0.5), hc.q(0.5)
}

// TestNoWorkBeforeMain runs runner with GODEBUG=inittrace=1 and holds
// each package's init to a few allocations: what a command may not need
// is made when it is used (issue 51: internal/untrusted's init alone made
// 2 631 allocations, compiling a regexp, in every hook and door call).
// Counts, not times. Third-party packages are held to what they make now.
func TestNoWorkBeforeMain(t *testing.T) {
	t.Parallel() // alongside the scripts: it waits more than it computes
	if testing.Short() {
		t.Skip("builds runner")
	}
	bin := filepath.Join(t.TempDir(), "runner")
	if out, err := goBuildStatic(bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var trace bytes.Buffer
	cmd.Stderr = &trace
	if err := cmd.Run(); err != nil {
		t.Fatalf("runner version: %v\n%s", err, trace.String())
	}
	const (
		ownBytes, ownAllocs = 4 << 10, 64 // per package of ours
		// All packages' inits together: about 115 KB in 2026-12, 260 KB
		// since runner mcp links the official MCP SDK (issue 52 §3), whose
		// dependency github.com/google/jsonschema-go alone makes 80 KB and
		// encoding/gob 27 KB; no package of ours may need more.
		allBytes = 320 << 10
	)
	total, inits := 0, 0
	sc := bufio.NewScanner(&trace)
	for sc.Scan() {
		// init PKG @T ms, C ms clock, B bytes, A allocs
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[0] != "init" {
			continue
		}
		inits++
		size, _ := strconv.Atoi(f[7])
		allocs, _ := strconv.Atoi(f[9])
		total += size
		if strings.HasPrefix(f[1], "github.com/runner-cli/runner") && (size > ownBytes || allocs > ownAllocs) {
			t.Errorf("%s's init makes %d bytes in %d allocations (at most %d in %d): make what it computes lazy (textutil.LazyRegexp; a switch for a lookup table; a function over a sync.Once, not a package-level sync.OnceValue or map, which are made at init)",
				f[1], size, allocs, ownBytes, ownAllocs)
		}
	}
	if inits < 20 {
		t.Fatalf("only %d inits traced: did GODEBUG=inittrace=1 change?\n%s", inits, trace.String())
	}
	if total > allBytes {
		t.Errorf("the inits make %d bytes before main (at most %d): a dependency that computes at init was added?", total, allBytes)
	}
}
