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

// TestRootCommandsNamed: each of rootCommands' names is the name of the
// command it builds, so `runner NAME` builds only NAME; the whole tree has
// them all and nothing else but the generated docs' commands.
func TestRootCommandsNamed(t *testing.T) {
	a := &app{getenv: func(string) string { return "" }}
	for _, c := range a.rootCommands() {
		if got := c.build().Name(); got != c.name {
			t.Errorf("rootCommands: %q builds %q", c.name, got)
		}
		root := a.newRoot(c.name)
		if n := len(root.Commands()); n != 1 || root.Commands()[0].Name() != c.name {
			t.Errorf("newRoot(%q) has %d commands", c.name, n)
		}
	}
	if got, want := len(a.newRootCmd().Commands()), len(a.rootCommands())+len(a.docCommands()); got != want {
		t.Errorf("the whole tree has %d commands, want %d", got, want)
	}
	for args, want := range map[string]string{"ps --all": "ps", "--socket s supervise t_1": "supervise",
		"--socket=s hook": "hook", "--help": "", "": "", "help ps": "help"} {
		if got := commandName(strings.Fields(args)); got != want {
			t.Errorf("commandName(%q) = %q, want %q", args, got, want)
		}
	}
}
