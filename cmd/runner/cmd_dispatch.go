package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/runner-cli/runner/cmd/runner/exitcode"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/door"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/group"
	"github.com/runner-cli/runner/runner/plan"
	"github.com/runner-cli/runner/runner/profile"

	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/agentsim"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// dispatchOptions are the arguments and flags of `runner dispatch`: those
// the plan reads bound to plan.Flags (package plan makes them a request
// over the config), the others here.
type dispatchOptions struct {
	args                       []string // PROJECT [TASK]
	file, notify, size         string
	model, awareness           string // the plan's too, and the group's candidates' (runGroup)
	worktree, sandbox, overlap bool   // the plan's when given
	changed                    func(name string) bool
	asJSON, printAnswer        bool
	plan                       plan.Flags
	group                      group.Flags
}

func (a *app) newDispatchCmd() *cobra.Command {
	var f dispatchOptions
	cmd := &cobra.Command{
		Use:   "dispatch PROJECT [TASK]",
		Short: "Run a task with a coding agent in a tmux pane and wait for the outcome",
		Long: `Run TASK with an agent in a new window of the project's tmux session: take a
git snapshot, start the agent, wait until it is ready, deliver the task (with a
short note of what the other agents are doing), wait until the agent is done,
and record the outcome. PROJECT is a registered name ('runner project add') or a
directory such as . or /abs/path. TASK may come from --file F or --file -.

In the foreground the exit code is the outcome (see EXIT STATUS); with --detach
a supervisor process does the waiting and the task id is printed at once.

With --after ID[,ID...] the task stays queued (no snapshot, no pane) until
those tasks are done, then starts; if one of them ends failed, timeout,
cancelled or exited, this task is cancelled with that reason.
Watch it with 'runner ps', 'runner status ID', 'runner logs ID -f',
'runner wait ID' or 'runner attach ID'.

Two clocks bound a task. --ready-timeout bounds the start-up: from the launch
of the agent until it shows its prompt (a trust dialog accepted on the way);
past it the task ends timeout. A machine's supervisors watch at most twice
its CPUs' start-ups at once (at least 4): with more agents starting, the
others wait in starting, and their --ready-timeout counts from their turn. --timeout is the task's own time and counts from
the delivery of the text, so a slow start-up never uses it; past it the task
ends timeout (exit 3) and its pane is left for inspection. A follow-up turn
(send, a message) gets the full --timeout again from its delivery.`,
		Example: `  runner dispatch api "add a /health endpoint"
  runner dispatch . --agent shell --timeout 30m ./test.sh
  id=$(runner dispatch api --detach --worktree --file task.md)
  runner dispatch api --after "$id" --print-answer "what does the new endpoint return?"`,
		Args: args(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			f.args, f.changed, f.group.TriesSet = argv, cmd.Flags().Changed, cmd.Flags().Changed("tries")
			return a.runDispatch(cmd.Context(), f)
		},
	}
	addDispatchFlags(cmd.Flags(), &f)
	a.jsonFlag(cmd, &f.asJSON)
	answerFlag(cmd, &f.printAnswer)
	return cmd
}

// addDispatchFlags adds the flags of `runner dispatch` (but --json and
// --print-answer, which other commands share) to fl, filling f.
func addDispatchFlags(fl *pflag.FlagSet, f *dispatchOptions) {
	fl.StringVarP(&f.plan.Agent, "agent", "a", "", "agent profile (default: the config's default_agent; see 'runner agents')")
	fl.StringVarP(&f.model, "model", "m", "", "model for the agent (aliases from the config, e.g. sonnet)")
	fl.StringArrayVar(&f.plan.AgentArgs, "agent-arg", nil, "extra argument passed to the agent as is (repeatable)")
	fl.StringVar(&f.plan.Permissions, "permissions", "", "ask: the agent's asking mode for its installed version (every tool call but a read asks: --approve-rule decides, else needs_input); auto: its own auto-approval mode; default: whatever its own default is (default: the config's permissions, else ask, or the CLI's own default for a CLI that never asks; see 'runner agents show NAME')")
	fl.StringArrayVar(&f.plan.Approve, "approve-rule", nil, "answer yes to an approval dialog whose text matches this regex; stop on any other (repeatable)")
	fl.BoolVar(&f.plan.YesTrust, "yes-trust", false, "accept the agent's folder-trust dialog if the profile knows it")
	fl.StringVarP(&f.file, "file", "f", "", "read the task from file F ('-' for standard input)")
	fl.BoolVarP(&f.plan.Detach, "detach", "d", false, "return at once with the task id; a supervisor process waits")
	fl.BoolVar(&f.plan.WaitInput, "wait-input", false, "when the agent asks a question, keep waiting (answer it with 'runner attach') instead of exiting 4")
	fl.DurationVar(&f.plan.Timeout, "timeout", 0, "give up on the task this long after its text was delivered (default: the config's task_timeout, 60m)")
	fl.DurationVar(&f.plan.ReadyTimeout, "ready-timeout", 0, "how long the agent may take from its launch (or its start slot) to show its prompt (default: the config's ready_timeout, 60s)")
	fl.BoolVar(&f.plan.RequireSnapshot, "require-snapshot", false, "refuse to run when no git snapshot can be taken")
	fl.StringVar(&f.plan.From, "from", "", "start from worktree task ID's branch (its work, leftovers committed); needs --after ID; implies --worktree")
	fl.BoolVar(&f.sandbox, "sandbox", false, "run the agent in a bubblewrap sandbox: it writes only its task's folder, its own state under HOME, a private /tmp and runner's state (default: the config's sandbox for the project; needs bwrap)")
	fl.BoolVar(&f.worktree, "worktree", false, "run the task in a git worktree of its own, on branch runner/<id> made from its snapshot (review with 'runner diff ID', bring back with 'runner merge ID')")
	fl.BoolVar(&f.plan.Commit, "commit", false, "commit what the task changed when it is done (trailer Runner-Task: ID)")
	fl.BoolVar(&f.plan.CommitBranch, "commit-branch", false, "with --commit, commit on a new branch runner/ID")
	fl.BoolVar(&f.plan.CommitAll, "commit-all", false, "with --commit, commit even if the tree was dirty before the task")
	fl.BoolVar(&f.plan.Exclusive, "exclusive", false, "take the project's lock; exit 5 if an active exclusive task holds it (a lock being let go by an ended one is waited for)")
	fl.BoolVar(&f.plan.WaitLock, "wait-lock", false, "with --exclusive, wait for the lock instead of exiting 5")
	fl.StringVar(&f.notify, "notify", "", "command (argv, quoted like a shell) run when the task ends or needs input")
	fl.StringArrayVar(&f.plan.After, "after", nil, "start only when these tasks are done: ID[,ID...] (repeatable); cancelled if one fails")
	fl.StringVar(&f.plan.SandboxHome, "sandbox-home", "", "with --sandbox: shared (the agent writes its CLI's own directories, ~/.claude …) or task (a copy of them for the task, dropped with it) (default: the config's sandbox_home, else shared)")
	fl.StringVar(&f.plan.Host, "host", "", "run on this registered host (runner host add): PROJECT is then an absolute path there, or a project on it; any or label:L places it on the freest host of a pool (it waits queued while all are full); local: this machine, whatever the config's pool")
	fl.StringVar(&f.plan.Source, "source", "user", "who asked: user or cron (recorded with the task)")
	fl.StringVar(&f.size, "size", "200x50", "size of a new tmux session, WIDTHxHEIGHT")
	fl.BoolVar(&f.plan.NoHook, "no-hook", false, "do not install the agent's turn-end hook; detect from the screen only")
	fl.DurationVar(&f.plan.Settle, "settle", 0, "how long a finished screen must hold before the turn counts as done (default: config)")
	fl.DurationVar(&f.plan.Idle, "idle", 0, "for agents without screen markers: quiet time that counts as done (default: config)")
	fl.Int64Var(&f.plan.BudgetTokens, "budget-tokens", 0, "end the task failed (exit 6) once it and its child tasks used N tokens (input, cached and output, as the agents' CLIs recorded them; default: config budget_tokens)")
	fl.Float64Var(&f.plan.BudgetUSD, "budget-usd", 0, "end the task failed (exit 6) once it and its child tasks cost X dollars, as the agents' CLIs reported it (OpenCode, pi; default: config budget_usd)")
	fl.StringVar(&f.plan.OnLimit, "on-limit", "", "when the agent's provider usage or rate limit ends a turn: fail (end the task, exit 7) or wait (until the reset, then deliver \"continue\"; config limit_continue) (default: config on_limit, else fail)")
	fl.DurationVar(&f.plan.LimitWait, "limit-wait", 0, "with --on-limit wait: how long to wait when the agent's CLI gives no reset time (default: config limit_wait, else 15m)")
	fl.IntVar(&f.plan.MaxTurns, "max-turns", 0, "end the task failed (exit 6) rather than deliver a turn past N, counting its child tasks' turns (default: config max_turns)")
	fl.BoolVar(&f.overlap, "overlap-messages", true, "tell the agent when another task changes files it changed (default: config overlap_messages)")
	fl.StringVar(&f.awareness, "awareness", "", "tell the agent about other tasks: project, all or off (default: config)")
	addGroupFlags(fl, &f.group)
	_ = fl.MarkHidden("settle")
}

// answerFlag adds --print-answer to a command that waits for a turn.
func answerFlag(cmd *cobra.Command, p *bool) {
	cmd.Flags().BoolVar(p, "print-answer", false, "print only the agent's answer (the record's \"answer\") on stdout; the exit code is the outcome as ever")
}

// printAnswers prints the answer of each task, and nothing else; an answer
// that does not end in a newline gets one.
func (a *app) printAnswers(tasks ...*state.Task) {
	for _, t := range tasks {
		if t == nil || t.Answer == "" {
			continue
		}
		fmt.Fprint(a.out, t.Answer)
		if !strings.HasSuffix(t.Answer, "\n") {
			fmt.Fprintln(a.out)
		}
	}
}

// runDispatch checks the flags, reads the config, dispatches the task and
// prints its outcome as asked.
func (a *app) runDispatch(ctx context.Context, f dispatchOptions) error {
	in, err := a.readDispatchInput(f)
	if err != nil {
		return err
	}
	env, cfg, err := a.runnerEnv(!f.asJSON || f.plan.Detach)
	if err != nil {
		return err
	}
	if f.asJSON {
		env.Progress = nil
	}
	// Cron dispatches keep the machine tidy: windows of tasks that ended
	// longer ago than close_after go in the background.
	a.startAutoGC(ctx, env, cfg)
	req, err := a.request(f, cfg, in)
	if err != nil {
		return err
	}
	a.waitBusyState(env.Store, req.Settings.Timeout, "this dispatch (its --timeout)")
	if f.isGroup() {
		return a.runGroup(ctx, f, env, cfg, req)
	}
	if f.printAnswer && (f.asJSON || f.plan.Detach) {
		return fault.Usagef("--print-answer waits for the answer: not with --json (the record has it as \"answer\") or --detach (use 'runner wait ID --print-answer')")
	}
	t, err := runner.Dispatch(ctx, env, req)
	if t == nil {
		return err
	}
	return a.printDispatch(f, t, err)
}

// dispatchInput is what a dispatch takes from its arguments alone, before
// the config is read.
type dispatchInput struct {
	text   string
	size   tmuxctl.Size
	notify []string // --notify's argv; nil without it
}

// readDispatchInput reads the task's text and checks the flags that need
// no config (a usage error names the flag).
func (a *app) readDispatchInput(f dispatchOptions) (dispatchInput, error) {
	var in dispatchInput
	var err error
	if in.text, err = a.readText(f.args[1:], f.file); err != nil {
		if len(f.args) == 1 && f.file == "" {
			return in, fault.Usagef("no task: give TASK after the project, or --file F / --file -")
		}
		return in, err
	}
	if f.plan.Permissions != "" {
		if err := profile.CheckPermissions("--permissions", f.plan.Permissions); err != nil {
			return in, err
		}
	}
	if f.plan.Source != "user" && f.plan.Source != "cron" {
		return in, fault.Usagef("--source must be user or cron")
	}
	if in.size, err = tmuxctl.ParseSize(f.size); err != nil {
		return in, fault.Usagef("--size: %v", err)
	}
	if f.notify != "" {
		if in.notify, err = agentsim.SplitArgs(f.notify); err != nil || len(in.notify) == 0 {
			return in, fault.Usagef("--notify %q: %v", f.notify, err)
		}
	}
	return in, nil
}

// request is what runner.Dispatch is asked (its plan, package plan, is
// made of it there): the flags over the config (plan.Flags.Request),
// with the sandboxed task that asks through its door, if one does.
func (a *app) request(f dispatchOptions, cfg *config.Config, in dispatchInput) (runner.DispatchRequest, error) {
	fl := f.plan
	fl.Project, fl.Text, fl.Size, fl.Notify = f.args[0], in.text, in.size, in.notify
	fl.Model, fl.Awareness, fl.Confined = f.model, f.awareness, a.getenv(door.EnvConfined)
	fl.Worktree, fl.Sandbox = givenBool(f, "worktree", f.worktree), givenBool(f, "sandbox", f.sandbox)
	fl.OverlapMessages = givenBool(f, "overlap-messages", f.overlap)
	return fl.Request(cfg)
}

// isGroup reports whether f dispatches a group (--agents, --tries, or a
// group's flags, which runGroup refuses alone).
func (f dispatchOptions) isGroup() bool { return f.group.Active() || f.group.Given() }

// givenBool is flag name's value v when it was given, else nil: the
// config decides.
func givenBool(f dispatchOptions, name string, v bool) *bool {
	if f.changed == nil || !f.changed(name) {
		return nil
	}
	return &v
}

// printDispatch prints a dispatch's outcome as asked (the answer, JSON,
// the id of a detached task, or the outcome) and returns the error that
// sets the exit code.
func (a *app) printDispatch(f dispatchOptions, t *state.Task, err error) error {
	if f.printAnswer {
		a.printAnswers(t)
		if err != nil && !errors.Is(err, fault.ErrUsage) {
			return &exitcode.Error{Code: exitcode.Of(err), Err: err}
		}
		return err
	}
	if f.asJSON {
		if perr := a.printJSON(t); perr != nil {
			return perr
		}
		if err != nil {
			return &exitcode.Error{Code: exitcode.Of(err), Err: nil}
		}
		return nil
	}
	if f.plan.Detach && err == nil {
		fmt.Fprintln(a.out, t.ID)
		return nil
	}
	a.printOutcome(t)
	return err
}

// printOutcome prints a finished turn: the status line, the summary and
// where to look next.
func (a *app) printOutcome(t *state.Task) {
	took := ""
	if !t.Ended.IsZero() && !t.Created.IsZero() {
		took = " in " + t.Ended.Sub(t.Created).Round(100*time.Millisecond).String()
	}
	// The summary is the answer's first line when the turn had one.
	if last := t.LastTurn(); last != "" {
		fmt.Fprintf(a.out, "%s %s%s: %s\n", t.ID, t.Status, took, last)
	} else {
		fmt.Fprintf(a.out, "%s %s%s\n", t.ID, t.Status, took)
	}
	if t.Status == state.StatusNeedsInput && t.Question != "" {
		fmt.Fprintf(a.out, "  question: %s\n", strings.ReplaceAll(strings.TrimSpace(t.Question), "\n", "\n            "))
	}
	if t.Status != state.StatusDone && t.ResultTail != "" {
		fmt.Fprintln(a.out, "  last lines:")
		for _, l := range strings.Split(textutil.LastLines(t.ResultTail, 8), "\n") {
			fmt.Fprintf(a.out, "    %s\n", l)
		}
	}
	fmt.Fprintf(a.out, "  see: runner status %s · runner logs %s · runner attach %s\n", t.ID, t.ID, t.ID)
}
