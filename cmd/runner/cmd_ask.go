package main

import (
	"context"
	"time"

	"github.com/runner-cli/runner/runner/ask"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/mailbox"

	"github.com/spf13/cobra"
)

func (a *app) newAskCmd() *cobra.Command {
	var opts askOptions
	cmd := &cobra.Command{
		Use:   "ask TARGET... QUESTION [--timeout D] [--json]",
		Short: "Ask busy agents a question; headless copies of them (shadows) answer",
		Long: `Ask the agents of tasks a question without interrupting them. For each target, in
parallel, a "shadow" answers: the agent's headless mode (claude -p, codex exec,
gemini -p, ...; read-only where the CLI has such a mode) runs in the task's
directory with the task's text, its turn log, the end of its output and the
question. The task's pane is never touched. Each answer prints as it arrives;
the target then gets an FYI message with the question and its shadow's answer.
A target whose agent has no headless mode (aider, shell) gets the question as an
ordinary message instead, and the output says so.

TARGET is a task id (or a unique prefix), @siblings (the calling task's
siblings; only from inside a runner pane) or @all (every active task but the
caller). The last argument is the QUESTION, unless --file F (or --file -) gives it.

With --json, one JSON object per line per target, as they arrive: task, agent,
mode ("shadow" or "message"), answer, error, timed_out, elapsed_ms, exit (the
shadow's exit status, null when killed or not run), fyi_error.

Exit status: 0 every target answered (or got the question as a message), 1 some
shadow failed, 3 some timed out (and none failed), 2 bad targets (nothing run).`,
		Example: `  runner ask t_def456 "which file holds the retry logic?"
  runner ask @all --timeout 30s --json --file question.md
  # inside a task's pane: runner ask @siblings "is anyone changing handler.go?"`,
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			return a.runAsk(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.file, "file", "f", "", "read the question from file F ('-' for standard input)")
	cmd.Flags().DurationVar(&opts.timeout, "timeout", ask.DefaultTimeout, "give each shadow this long to answer (killed after)")
	cmd.Flags().IntVar(&opts.parallel, "parallel", ask.DefaultParallel, "run at most this many shadows at once")
	a.jsonFlag(cmd, &opts.asJSON)
	return cmd
}

// askOptions are the arguments and flags of `runner ask`.
type askOptions struct {
	args     []string
	file     string
	timeout  time.Duration
	parallel int
	asJSON   bool
}

func (a *app) runAsk(ctx context.Context, opts askOptions) error {
	targets, question := opts.args, ""
	if opts.file == "" {
		if len(opts.args) < 2 {
			return fault.Usagef("ask: give TARGET... QUESTION (the last argument is the question), or the question with --file F")
		}
		targets, question = opts.args[:len(opts.args)-1], opts.args[len(opts.args)-1]
	} else {
		q, err := a.readText(nil, opts.file)
		if err != nil {
			return err
		}
		question = q
	}
	if opts.timeout < 0 || opts.parallel < 0 {
		return fault.Usagef("ask: --timeout and --parallel must not be negative")
	}
	env, cfg, err := a.runnerEnv(false)
	if err != nil {
		return err
	}
	md := mailboxDeps(env)
	md.TreeOnly = a.treeOnly(cfg)
	req := ask.Request{
		Targets: targets, Question: question,
		Timeout: opts.timeout, Parallel: opts.parallel,
		Post:     mailbox.PostTo(md, mailbox.Request{MaxHops: cfg.MaxHops, MaxPerRoot: cfg.MaxMessagesPerRoot}),
		OnAnswer: ask.Writer(a.out, opts.asJSON),
	}
	d := askDeps(env)
	d.TreeOnly = a.treeOnly(cfg)
	_, err = ask.Run(ctx, d, req)
	return err
}
