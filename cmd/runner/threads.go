package main

import (
	"runtime"
	"runtime/debug"
)

// Every runner process is small: a hook, a dispatch, a `runner ps` of a
// script are over in milliseconds, and a supervisor waits on its pane. A
// burst of a thousand of them at once ran the machine out of process ids
// (issue 51: 31 800 threads against the kernel's 32 768), one OS thread
// per core and spares each. So:
const (
	// maxProcs bounds GOMAXPROCS (the threads running Go code at once,
	// the garbage collector's workers among them) unless the user set
	// GOMAXPROCS: a 64-core machine would otherwise give every hook 64.
	maxProcs = 2
	// maxThreads is the process's bound on OS threads (Go's default is
	// 10 000): far above what a runner process uses (a supervisor: 8
	// idle, about 10 under work; a dispatch fewer; see docs/benchmarks.md)
	// and above a gc of many tasks at once (a goroutine per task, each
	// may wait in flock for a tmux client slot: a thread each), far below
	// the machine's process ids (32 768 by default); past it the process
	// dies rather than the machine.
	maxThreads = 2048
)

// boundThreads applies maxProcs (when GOMAXPROCS is not set in the
// environment) and maxThreads to this process.
func boundThreads(getenv func(string) string) {
	if getenv("GOMAXPROCS") == "" && runtime.GOMAXPROCS(0) > maxProcs {
		runtime.GOMAXPROCS(maxProcs)
	}
	debug.SetMaxThreads(maxThreads)
}
