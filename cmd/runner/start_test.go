package main

import (
	"bytes"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestRootDescribedInHelp: the description (built from the profiles, only
// when help is shown) is in `runner --help`, `runner` and `runner help`,
// and not computed for a command that does not show it.
func TestRootDescribedInHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {}, {"help"}} {
		var out bytes.Buffer
		a, flush := newApp(strings.NewReader(""), &out, io.Discard, func(string) string { return "" })
		a.run(t.Context(), args)
		flush()
		if !strings.Contains(out.String(), "runner drives CLI coding agents") {
			t.Errorf("runner %v: no description:\n%s", args, out.String())
		}
	}
	root := (&app{getenv: func(string) string { return "" }}).newRootCmd()
	if root.Long != "" {
		t.Errorf("the root's description was computed before help asked for it")
	}
}

func TestBoundThreads(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	defer debug.SetMaxThreads(debug.SetMaxThreads(10000))
	runtime.GOMAXPROCS(8)
	boundThreads(func(string) string { return "" })
	if n := runtime.GOMAXPROCS(0); n != maxProcs {
		t.Errorf("GOMAXPROCS %d, want %d", n, maxProcs)
	}
	if old := debug.SetMaxThreads(10000); old != maxThreads {
		t.Errorf("max threads %d, want %d", old, maxThreads)
	}
	runtime.GOMAXPROCS(8)
	boundThreads(func(k string) string {
		if k == "GOMAXPROCS" {
			return "8"
		}
		return ""
	})
	if n := runtime.GOMAXPROCS(0); n != 8 {
		t.Errorf("GOMAXPROCS %d with GOMAXPROCS=8 set, want it kept", n)
	}
}
