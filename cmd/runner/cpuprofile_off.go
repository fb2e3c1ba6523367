//go:build !cpuprofile

package main

// startCPUProfile: nothing in the runner users run, which leaves
// runtime/pprof out (build with -tags cpuprofile for RUNNER_CPUPROFILE_DIR:
// cpuprofile.go).
func startCPUProfile([]string) func() { return func() {} }
