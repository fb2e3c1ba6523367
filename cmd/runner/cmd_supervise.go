package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/notice"
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
	return recordHookEvent(a.getenv, a.in, opts.task, ev)
}

// hookContext gives the agent runner's notices for its running turn
// (package notice) as the hook's output: from the task's hook directory and
// events file, the state directory's layout (state.Store.TaskFile), which
// a sandboxed agent sees there too. Its input, the CLI's event, is read
// (bounded) and not used.
func (a *app) hookContext(opts hookOptions) error {
	task := opts.task
	if task == "" {
		task = a.getenv("RUNNER_TASK_ID")
	}
	if !state.ValidTaskID(task) {
		return fmt.Errorf("task id %q: pass --task ID (or run it in a task's pane, where RUNNER_TASK_ID is set)", task)
	}
	dir, err := state.DefaultDir(a.getenv)
	if err != nil {
		return err
	}
	go func() { _, _ = io.Copy(io.Discard, io.LimitReader(a.in, 16<<20)) }()
	out, err := notice.Take(notice.Dir(filepath.Join(dir, "hooks", task)), filepath.Join(dir, "events", task+".jsonl"), opts.context)
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
	if err := recordHookEvent(getenv, in, task, ev); err != nil {
		fmt.Fprintln(errOut, "runner hook:", err)
		return ExitFailed, true
	}
	return 0, true
}

// recordHookEvent appends the agent's event (its JSON on stdin, read with
// a bound so a hook without input never hangs the agent) to the task's
// events file.
func recordHookEvent(getenv func(string) string, in io.Reader, task, name string) error {
	if task == "" {
		task = getenv("RUNNER_TASK_ID")
	}
	if task == "" {
		return errors.New("no task: pass --task ID (or run it in a task's pane, where RUNNER_TASK_ID is set)")
	}
	dir, err := state.DefaultDir(getenv)
	if err != nil {
		return err
	}
	ev := state.TaskEvent{Time: clock.Now(), Event: "Stop"}
	if name != "" {
		ev.Event = name
	}
	data := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(io.LimitReader(in, 16<<20)); data <- b }()
	select {
	case b := <-data:
		var obj map[string]any
		if json.Unmarshal(b, &obj) == nil {
			if n, ok := obj["hook_event_name"].(string); ok && name == "" {
				ev.Event = n
			}
			ev.Data = json.RawMessage(b)
		}
	case <-time.After(2 * time.Second):
	}
	return state.AppendTaskEventIn(dir, task, ev)
}
