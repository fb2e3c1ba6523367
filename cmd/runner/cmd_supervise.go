package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"syscall"

	"github.com/runner-cli/runner/cmd/runner/exitcode"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/hookevent"
	"golang.org/x/term"

	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/state"
	"github.com/spf13/cobra"
)

// superviseOptions are the flags of `runner supervise`.
type superviseOptions struct {
	task     string
	logLevel string
	lockFD   int // the project lock handed over (dispatch --exclusive --detach); 0: none
}

func (a *app) newSuperviseCmd() *cobra.Command {
	var opts superviseOptions
	cmd := &cobra.Command{
		Use:    "supervise ID",
		Short:  "Supervise a detached task (started by dispatch --detach and resume)",
		Hidden: true,
		Args:   args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.task = argv[0]
			return a.runSupervise(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.logLevel, "log-level", "info", "what the supervisor logs: debug, info, warn or error (text on a terminal, JSON lines in its log file)")
	cmd.Flags().IntVar(&opts.lockFD, runner.ProjectLockFlag, 0, "the descriptor of the project lock its dispatch handed over (held until the task's end is recorded)")
	return cmd
}

// runSupervise supervises one detached task, logging through log/slog to
// stderr (the task's supervisor log file).
func (a *app) runSupervise(ctx context.Context, opts superviseOptions) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(opts.logLevel)); err != nil {
		return fault.Usagef("--log-level %q: want debug, info, warn or error", opts.logLevel)
	}
	// A project lock (dispatch --exclusive --detach) arrives as fd 3
	// without close-on-exec: keep holding it here, but do not hand it to
	// the tmux, git and notify commands this process runs (a notify that
	// leaves a process behind would hold the lock). Every descriptor Go
	// opens is close-on-exec already. The supervision lets go of it as it
	// records the task's end, not when this process exits.
	syscall.CloseOnExec(3)
	var lock *state.ProjectLock
	if opts.lockFD > 0 {
		syscall.CloseOnExec(opts.lockFD)
		lock = state.HeldProjectLock(os.NewFile(uintptr(opts.lockFD), "project lock"))
	}
	env, _, err := a.runnerEnv(true)
	if err != nil {
		return err
	}
	env.Log = supervisorLogger(a.errOut, level)
	// A supervisor that gave up on a busy state left its task orphaned (4
	// of 300 in a burst): it waits its turn like the dispatch.
	a.waitBusyState(env.Store, 0, "the supervisor of "+opts.task)
	env.Log.Info(fmt.Sprintf("supervisor %d for %s", os.Getpid(), opts.task), "pid", os.Getpid(), "task", opts.task)
	err = runner.Supervise(ctx, env, opts.task, lock)
	env.Log.Info(fmt.Sprintf("supervisor %d ends: %v", os.Getpid(), err), "pid", os.Getpid(), "task", opts.task, "err", err)
	return err
}

// supervisorLogger logs to w at level: text on a terminal, JSON lines
// otherwise (the supervisor's log file).
func supervisorLogger(w io.Writer, level slog.Level) *slog.Logger {
	o := &slog.HandlerOptions{Level: level}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return slog.New(slog.NewTextHandler(w, o))
	}
	return slog.New(slog.NewJSONHandler(w, o))
}

func (a *app) newHookCmd() *cobra.Command {
	var opts hookOptions
	cmd := &cobra.Command{
		Use:    "hook --task ID [EVENT]",
		Short:  "Record an event from an agent's own hook (used in agent settings)",
		Hidden: true,
		Args:   args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			return a.runHook(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.task, "task", "", "task id (default $RUNNER_TASK_ID)")
	cmd.Flags().StringVar(&opts.context, "context", "", "print runner's notices for the running turn as the hook's additionalContext for `EVENT` (a CLI's hook that adds context: Claude Code's PostToolUse)")
	return cmd
}

// hookOptions are the arguments and flags of `runner hook`.
type hookOptions struct {
	args    []string
	task    string
	context string // the hook event whose additionalContext carries the notices
}

func (a *app) runHook(ctx context.Context, opts hookOptions) error {
	if opts.context != "" {
		return a.hookContext(opts)
	}
	ev := ""
	if len(opts.args) == 1 {
		ev = opts.args[0]
	}
	return hookevent.Record(a.getenv, a.in, opts.task, ev)
}

// hookContext prints the agent's notices for its running turn as the
// hook's output (hookevent.Context).
func (a *app) hookContext(opts hookOptions) error {
	out, err := hookevent.Context(a.getenv, a.in, opts.task, opts.context)
	if err != nil || out == nil {
		return err
	}
	_, err = a.rawOut.Write(append(out, '\n'))
	return err
}

// quickHook runs `hook --task ID [EVENT]` without building the command tree
// (it runs once per turn inside the agent's process tree: the less it does
// before the write, the sooner the turn's end is recorded). ok is false for
// any other argument list, which goes through cobra.
func quickHook(argv []string, getenv func(string) string, in io.Reader, errOut io.Writer) (code int, ok bool) {
	if len(argv) < 1 || argv[0] != "hook" {
		return 0, false
	}
	task, ev := "", ""
	rest := argv[1:]
	for len(rest) > 0 {
		switch {
		case rest[0] == "--task" && len(rest) > 1:
			task, rest = rest[1], rest[2:]
		case strings.HasPrefix(rest[0], "--task="):
			task, rest = strings.TrimPrefix(rest[0], "--task="), rest[1:]
		case !strings.HasPrefix(rest[0], "-") && ev == "":
			ev, rest = rest[0], rest[1:]
		default:
			return 0, false // help, a bad flag: cobra says what is wrong
		}
	}
	if err := hookevent.Record(getenv, in, task, ev); err != nil {
		fmt.Fprintln(errOut, "runner hook:", err)
		return exitcode.ExitFailed, true
	}
	return 0, true
}
