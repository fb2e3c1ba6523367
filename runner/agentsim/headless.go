package agentsim

import (
	"context"
	"fmt"
	"io"
)

// RunHeadless runs prompt's directives without a TUI, like `claude -p`:
// answer lines go to stdout, `ask` prints its question and answers no, the
// hook runs once at the end (a failure is a warning on stderr), and the
// prompt is recorded first. It returns the exit code: 0, N after `exit N`,
// 2 after `crash` (the panic text goes to stderr), 130 when ctx ends.
func RunHeadless(ctx context.Context, opts Options, prompt string, stdout, stderr io.Writer) (int, error) {
	if err := opts.fill(); err != nil {
		return 1, err
	}
	if err := appendRecord(opts.Record, prompt); err != nil {
		return 1, fmt.Errorf("agent-sim: %w", err)
	}
	if v, ok := simVote(prompt); ok {
		// A group's ballot (runner vote): the sim votes by rule.
		fmt.Fprintln(stdout, v)
		return 0, nil
	}
	ui := &headlessTurn{out: stdout}
	x := &executor{dir: opts.Dir, env: opts.Env, context: opts.contextHook()}
	if len(opts.Hook) > 0 {
		x.hook = func(ctx context.Context, prompt, event, answer string, usage *Usage) error {
			return runHook(ctx, &opts, prompt, event, answer, usage)
		}
	}
	end, err := x.runTurn(ctx, prompt, ui)
	switch {
	case err != nil:
		return 130, nil
	case ui.err != nil:
		return 1, fmt.Errorf("agent-sim: write answer: %w", ui.err)
	case end.exit:
		return end.code, nil
	case end.crash:
		fmt.Fprintln(stderr, crashText)
		return 2, nil
	}
	if !end.noHook {
		if err := runHook(ctx, &opts, prompt, "Stop", end.answer, end.usage); err != nil {
			fmt.Fprintf(stderr, "agent-sim: warning: %v\n", err)
		}
	}
	return 0, nil
}

// headlessTurn is the turnUI of a headless run.
type headlessTurn struct {
	out io.Writer
	err error
}

func (h *headlessTurn) line(s string) {
	if h.err == nil {
		_, h.err = fmt.Fprintln(h.out, s)
	}
}

func (h *headlessTurn) silent(bool) {}

func (h *headlessTurn) ask(_ context.Context, q string) (bool, error) {
	h.line(q)
	return false, nil
}

func (h *headlessTurn) confirm(ctx context.Context, q string) (bool, error) { return h.ask(ctx, q) }
