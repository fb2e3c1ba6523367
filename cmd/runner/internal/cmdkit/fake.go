package cmdkit

import (
	"bytes"
	"io"
	"strings"
)

// Buffers are what a Fake factory recorded: its output streams and
// whether a command said it runs with --json.
type Buffers struct {
	Out, ErrOut bytes.Buffer
	JSON        bool
}

// Fake returns a Factory for a family's tests: In reads in, Out and RawOut
// write to b.Out, ErrOut and RawErr to b.ErrOut, Getenv reads env, --json
// is recorded in b.JSON and no terminal is there; the openers (Config,
// Store, Env, Tmux, TmuxFor) and Checks are nil for the test to set.
func Fake(in string, env map[string]string) (*Factory, *Buffers) {
	b := &Buffers{}
	return &Factory{
		In: strings.NewReader(in), Out: &b.Out, ErrOut: &b.ErrOut, RawOut: &b.Out, RawErr: &b.ErrOut,
		Getenv:     func(k string) string { return env[k] },
		JSONErrors: func(v bool) { b.JSON = v },
		IsTerminal: func(io.Reader) bool { return false },
	}, b
}
