package cmdkit

import (
	"bytes"
	"context"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
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

// Run runs cmd with args the way a family's tests do: b's streams emptied
// first, cobra's own output discarded and silenced (the command's is in
// b), at most fakeRunLimit; it returns the command's error.
func (b *Buffers) Run(ctx context.Context, cmd *cobra.Command, args ...string) error {
	b.Out.Reset()
	b.ErrOut.Reset()
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	ctx, cancel := context.WithTimeout(ctx, fakeRunLimit)
	defer cancel()
	return cmd.ExecuteContext(ctx)
}

// fakeRunLimit bounds a command Buffers.Run runs.
const fakeRunLimit = 30 * time.Second
