//go:build cpuprofile

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
)

// envCPUProfileDir names a folder where every runner process (a dispatch, its
// supervisor, a hook, a wait) writes a Go CPU profile of its whole life, as
// NAME-PID.pprof (NAME is the command: dispatch, supervise, hook, ...), in a
// runner built with -tags cpuprofile (runtime/pprof and its compression
// cost every other start 1-2%: cpuprofile_off.go). It is
// a contributor's tool for finding where the time of a load goes (see the
// docs/benchmarks.md); nothing is written when it is unset.
const envCPUProfileDir = "RUNNER_CPUPROFILE_DIR"

// startCPUProfile starts the CPU profile envCPUProfileDir asks for and returns
// the function that ends it (a no-op when none is asked for or the file cannot
// be made: a profile never stops runner).
func startCPUProfile(args []string) func() {
	dir := os.Getenv(envCPUProfileDir)
	if dir == "" {
		return func() {}
	}
	name := "runner"
	for i := 0; i < len(args); i++ {
		if args[i] == "--socket" {
			i++ // its value
			continue
		}
		if a := args[i]; a != "" && a[0] != '-' && filepath.Base(a) == a {
			name = a
			break
		}
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d.pprof", name, os.Getpid())))
	if err != nil {
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
