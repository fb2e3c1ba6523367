// The runtime's periodic look at the cgroup's CPU limit (Go 1.25) would
// wake every process of runner's every second or so, a quiet supervisor
// included: runner sets GOMAXPROCS once, at its start.

//go:debug updatemaxprocs=0

// Command runner drives CLI coding agents inside tmux panes.
//
// All the work happens in Main so tests (and testscript) can call it
// without building the binary.
package main

import "os"

func main() {
	boundThreads(os.Getenv)
	stopProfile := startCPUProfile(os.Args[1:])
	code := Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stopProfile()
	os.Exit(code)
}
