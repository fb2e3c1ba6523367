package main

import (
	"bytes"
	"io"
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
