package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/agentsim"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
	"github.com/spf13/cobra"
)

// selfPath is the absolute path of this runner binary, as invoked (a
// symlink named runner is kept, so test harnesses that run the test binary
// under that name work too).
func selfPath() string {
	if a0 := os.Args[0]; filepath.Base(a0) == "runner" {
		if strings.Contains(a0, "/") {
			if abs, err := filepath.Abs(a0); err == nil {
				return abs
			}
		} else if p, err := exec.LookPath(a0); err == nil {
			if abs, err := filepath.Abs(p); err == nil {
				return abs
			}
		}
	}
	p, err := os.Executable()
	if err != nil {
		return ""
	}
	return p
}

// runnerEnv loads the config and opens the state and the tmux server.
func (a *app) runnerEnv(progress bool) (*runner.Env, *runner.Config, error) {
	cfg, _, err := runner.LoadConfig(a.getenv)
	if err != nil {
		return nil, nil, err
	}
	store, err := runner.OpenStore(a.getenv, cfg)
	if err != nil {
		return nil, nil, err
	}
	profiles, err := cfg.Profiles()
	if err != nil {
		return nil, nil, err
	}
	env := &runner.Env{Store: store, TC: a.tmuxClientFor(cfg),
		Profiles: profiles, Getenv: a.getenv, Environ: os.Environ, Exe: selfPath()}
	if progress {
		env.Progress = a.errOut
	}
	return env, cfg, nil
}

type dispatchFlags struct {
	agent, model, permissions, file, notify, source, size string
	agentArgs, approve, after                             []string
	yesTrust, detach, waitInput, requireSnap, exclusive   bool
	waitLock, commit, commitBranch, commitAll, noHook     bool
	asJSON, printAnswer                                   bool
	timeout, readyTimeout, settle, idle                   time.Duration
	awareness                                             string
}

func (a *app) newDispatchCmd() *cobra.Command {
	var f dispatchFlags
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
past it the task ends timeout. --timeout is the task's own time and counts from
the delivery of the text, so a slow start-up never uses it; past it the task
ends timeout (exit 3) and its pane is left for inspection. A follow-up turn
(send, a message) gets the full --timeout again from its delivery.`,
		Example: `  runner dispatch api "add a /health endpoint"
  runner dispatch . --agent codex --model gpt5 --file task.md
  runner dispatch api --detach --json "write tests for the parser"
  runner dispatch ~/src/site --agent shell "make test"
  B=$(runner dispatch api --detach --after "$A" "document the endpoint")
  answer=$(runner dispatch api --print-answer "what does main.go do?")`,
		Args: args(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			return a.runDispatch(cmd.Context(), f, argv)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.agent, "agent", "a", "", "agent profile (default: the config's default_agent; see 'runner agents')")
	fl.StringVarP(&f.model, "model", "m", "", "model for the agent (aliases from the config, e.g. sonnet)")
	fl.StringArrayVar(&f.agentArgs, "agent-arg", nil, "extra argument passed to the agent as is (repeatable)")
	fl.StringVar(&f.permissions, "permissions", "default", "auto: start the agent in its own auto-approval mode (see 'runner agents show NAME')")
	fl.StringArrayVar(&f.approve, "approve-rule", nil, "answer yes to an approval dialog whose text matches this regex; stop on any other (repeatable)")
	fl.BoolVar(&f.yesTrust, "yes-trust", false, "accept the agent's folder-trust dialog if the profile knows it")
	fl.StringVarP(&f.file, "file", "f", "", "read the task from file F ('-' for standard input)")
	fl.BoolVarP(&f.detach, "detach", "d", false, "return at once with the task id; a supervisor process waits")
	fl.BoolVar(&f.waitInput, "wait-input", false, "when the agent asks a question, keep waiting (answer it with 'runner attach') instead of exiting 4")
	fl.DurationVar(&f.timeout, "timeout", 0, "give up on the task this long after its text was delivered (default: the config's task_timeout, 60m)")
	fl.DurationVar(&f.readyTimeout, "ready-timeout", 0, "how long the agent may take from its launch to show its prompt (default: the config's ready_timeout, 60s)")
	fl.BoolVar(&f.requireSnap, "require-snapshot", false, "refuse to run when no git snapshot can be taken")
	fl.BoolVar(&f.commit, "commit", false, "commit what the task changed when it is done (trailer Runner-Task: ID)")
	fl.BoolVar(&f.commitBranch, "commit-branch", false, "with --commit, commit on a new branch runner/ID")
	fl.BoolVar(&f.commitAll, "commit-all", false, "with --commit, commit even if the tree was dirty before the task")
	fl.BoolVar(&f.exclusive, "exclusive", false, "take the project's lock; exit 5 if another exclusive task holds it")
	fl.BoolVar(&f.waitLock, "wait-lock", false, "with --exclusive, wait for the lock instead of exiting 5")
	fl.StringVar(&f.notify, "notify", "", "command (argv, quoted like a shell) run when the task ends or needs input")
	fl.StringArrayVar(&f.after, "after", nil, "start only when these tasks are done: ID[,ID...] (repeatable); cancelled if one fails")
	fl.StringVar(&f.source, "source", "user", "who asked: user or cron (recorded with the task)")
	fl.StringVar(&f.size, "size", "200x50", "size of a new tmux session, WIDTHxHEIGHT")
	fl.BoolVar(&f.noHook, "no-hook", false, "do not install the agent's turn-end hook; detect from the screen only")
	fl.DurationVar(&f.settle, "settle", 0, "how long a finished screen must hold before the turn counts as done (default: config)")
	fl.DurationVar(&f.idle, "idle", 0, "for agents without screen markers: quiet time that counts as done (default: config)")
	fl.StringVar(&f.awareness, "awareness", "", "tell the agent about other tasks: project, all or off (default: config)")
	_ = fl.MarkHidden("settle")
	a.jsonFlag(cmd, &f.asJSON)
	answerFlag(cmd, &f.printAnswer)
	return cmd
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

func (a *app) runDispatch(ctx context.Context, f dispatchFlags, argv []string) error {
	text, err := a.readText(argv[1:], f.file)
	if err != nil {
		if len(argv) == 1 && f.file == "" {
			return runner.Usagef("no task: give TASK after the project, or --file F / --file -")
		}
		return err
	}
	if f.permissions != "default" && f.permissions != "auto" {
		return runner.Usagef("--permissions must be auto or default")
	}
	if f.source != "user" && f.source != "cron" {
		return runner.Usagef("--source must be user or cron")
	}
	size, err := tmuxctl.ParseSize(f.size)
	if err != nil {
		return runner.Usagef("--size: %v", err)
	}
	var notify []string
	if f.notify != "" {
		if notify, err = agentsim.SplitArgs(f.notify); err != nil || len(notify) == 0 {
			return runner.Usagef("--notify %q: %v", f.notify, err)
		}
	}
	env, cfg, err := a.runnerEnv(!f.asJSON || f.detach)
	if err != nil {
		return err
	}
	if f.asJSON {
		env.Progress = nil
	}
	// Cron dispatches keep the machine tidy: windows of tasks that ended
	// longer ago than close_after go in the background.
	a.startAutoGC(ctx, env, cfg)
	if f.agent == "" {
		f.agent = cfg.DefaultAgent
	}
	if len(notify) == 0 {
		notify = cfg.NotifyCommand
	}
	awareness := cfg.Awareness.Mode
	if f.awareness != "" {
		m, err := runner.ParseAwarenessMode(f.awareness)
		if err != nil {
			return runner.Usagef("--awareness: %v", err)
		}
		awareness = m
	}
	set := runner.RunSettings{
		Timeout: pick(f.timeout, cfg.TaskTimeout.Duration), ReadyTimeout: pick(f.readyTimeout, cfg.ReadyTimeout.Duration),
		Settle: f.settle, DefaultSettle: cfg.Settle.Duration, Idle: pick(f.idle, cfg.Idle.Duration),
		YesTrust: f.yesTrust, WaitInput: f.waitInput, ApproveRules: append(append([]string(nil), cfg.ApproveRules...), f.approve...),
		Commit: f.commit || f.commitBranch || f.commitAll, CommitBranch: f.commitBranch, CommitAll: f.commitAll,
		Notify: notify, NotifyTimeout: cfg.NotifyTimeout.Duration, Awareness: awareness, AwarenessMax: cfg.Awareness.MaxChars,
		Detached: f.detach, NoTmuxMessage: !cfg.NotifyTmux,
	}
	req := runner.DispatchRequest{Project: argv[0], Text: text, Agent: f.agent, Model: cfg.ResolveModel(f.agent, f.model),
		AgentArgs: f.agentArgs, PermissionsAuto: f.permissions == "auto", RequireSnapshot: f.requireSnap,
		Exclusive: f.exclusive, WaitLock: f.waitLock, Source: f.source, Size: size, UseHook: !f.noHook, Settings: set,
		MaxLevel: cfg.MaxLevel, After: f.after}
	if f.printAnswer && (f.asJSON || f.detach) {
		return runner.Usagef("--print-answer waits for the answer: not with --json (the record has it as \"answer\") or --detach (use 'runner wait ID --print-answer')")
	}
	t, err := runner.Dispatch(ctx, env, req)
	if t == nil {
		return err
	}
	if f.printAnswer {
		a.printAnswers(t)
		if err != nil && !errors.Is(err, runner.ErrUsage) {
			return &runner.ExitError{Code: exitCode(err), Err: err}
		}
		return err
	}
	if f.asJSON {
		if perr := a.printJSON(t); perr != nil {
			return perr
		}
		if err != nil {
			return &runner.ExitError{Code: exitCode(err), Err: nil}
		}
		return nil
	}
	if f.detach && err == nil {
		fmt.Fprintln(a.out, t.ID)
		return nil
	}
	a.printOutcome(t)
	return err
}

func pick(flag, cfg time.Duration) time.Duration {
	if flag > 0 {
		return flag
	}
	return cfg
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
		for _, l := range strings.Split(runner.LastLines(t.ResultTail, 8), "\n") {
			fmt.Fprintf(a.out, "    %s\n", l)
		}
	}
	fmt.Fprintf(a.out, "  see: runner status %s · runner logs %s · runner attach %s\n", t.ID, t.ID, t.ID)
}

func (a *app) newSuperviseCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "supervise ID",
		Short:  "Supervise a detached task (started by dispatch --detach and resume)",
		Hidden: true,
		Args:   args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			// A project lock (dispatch --exclusive --detach) arrives as fd 3
			// without close-on-exec: keep holding it here, but do not hand
			// it to the tmux, git and notify commands this process runs (a
			// notify that leaves a process behind would hold the lock).
			// Every descriptor Go opens is close-on-exec already.
			syscall.CloseOnExec(3)
			env, _, err := a.runnerEnv(true)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.errOut, "%s supervisor %d for %s\n", time.Now().Format(time.RFC3339), os.Getpid(), argv[0])
			err = runner.Supervise(cmd.Context(), env, argv[0])
			fmt.Fprintf(a.errOut, "%s supervisor %d ends: %v\n", time.Now().Format(time.RFC3339), os.Getpid(), err)
			return err
		},
	}
}

func (a *app) newHookCmd() *cobra.Command {
	var task string
	cmd := &cobra.Command{
		Use:    "hook --task ID [EVENT]",
		Short:  "Record an event from an agent's own hook (used in agent settings)",
		Hidden: true,
		Args:   args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			ev := ""
			if len(argv) == 1 {
				ev = argv[0]
			}
			return recordHookEvent(a.getenv, a.in, task, ev)
		},
	}
	cmd.Flags().StringVar(&task, "task", "", "task id (default $RUNNER_TASK_ID)")
	return cmd
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
		return runner.ExitFailed, true
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
	ev := state.TaskEvent{Time: time.Now(), Event: "Stop"}
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

func (a *app) newPsCmd() *cobra.Command {
	var (
		all     bool
		project string
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "ps [--all] [--project P]",
		Short: "List tasks (active ones; --all for finished too)",
		Long: `List tasks, newest first. Every call reconciles the state with the live
panes and supervisors: a task whose supervisor is gone becomes orphaned (resume
it with 'runner resume ID') or, when its pane is gone too, failed.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			env, cfg, err := a.runnerEnv(false)
			if err != nil {
				return err
			}
			defer a.startAutoGC(cmd.Context(), env, cfg)
			tasks, err := runner.ListTasks(cmd.Context(), env, runner.PSOptions{All: all, Project: project})
			if err != nil {
				return err
			}
			if asJSON {
				if tasks == nil {
					tasks = []*state.Task{}
				}
				return a.printJSON(tasks)
			}
			tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tPROJECT\tAGENT\tSTATUS\tAGE\tLEVEL\tPARENT\tTASK")
			now := time.Now()
			for _, t := range tasks {
				proj := t.Project
				if proj == "" {
					proj = filepath.Base(t.Dir)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", t.ID, proj, t.Agent, t.Status,
					runner.Age(now, t.Created), t.Level, orDash(t.Parent), runner.FirstLine(t.Text, 50))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "include finished tasks")
	cmd.Flags().StringVar(&project, "project", "", "only tasks of this project: a registered name or a directory (./a, /x/b)")
	a.jsonFlag(cmd, &asJSON)
	return cmd
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (a *app) newStatusCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status ID",
		Short: "Show a task: lifecycle with times and reasons, snapshot, delivery, result",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			env, cfg, err := a.runnerEnv(false)
			if err != nil {
				return err
			}
			defer a.startAutoGC(cmd.Context(), env, cfg)
			t, err := runner.GetTask(cmd.Context(), env, argv[0])
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(t)
			}
			w := a.out
			fmt.Fprintf(w, "task      %s (%s)\n", t.ID, t.Status)
			proj := t.Project
			if proj == "" {
				proj = "(path)"
			}
			fmt.Fprintf(w, "project   %s  %s\n", proj, t.Dir)
			fmt.Fprintf(w, "agent     %s\n", t.Agent)
			fmt.Fprintf(w, "level     %d  parent %s  source %s\n", t.Level, orDash(t.Parent), orDash(t.Source))
			if len(t.After) > 0 {
				fmt.Fprintf(w, "after     %s\n", strings.Join(t.After, ", "))
			}
			fmt.Fprintf(w, "pane      %s (session %s, socket %s)\n", orDash(t.Tmux.Pane), t.Tmux.Session, t.Tmux.Socket)
			if !t.Reclaimed.IsZero() {
				fmt.Fprintf(w, "reclaimed %s: window closed, processes ended (runner send %s TEXT starts the agent again)\n", t.Reclaimed.Local().Format(time.DateTime), t.ID)
			}
			if t.AgentSession != "" {
				fmt.Fprintf(w, "session   %s (the agent's own conversation id)\n", t.AgentSession)
			}
			fmt.Fprintf(w, "snapshot  %s\n", orDash(t.SnapshotRef))
			if t.Commit != "" {
				fmt.Fprintf(w, "commit    %s\n", t.Commit)
			}
			fmt.Fprintf(w, "delivery  %s\n", orDash(t.Delivery))
			// GetTask reconciled already: the state as it is is enough.
			var msgs []runner.InboxEntry
			if st, err := env.Store.Read(cmd.Context()); err == nil {
				msgs = runner.InboxOf(st, t.ID)
			}
			if len(msgs) > 0 {
				count := map[string]int{}
				for _, m := range msgs {
					count[m.Direction+" "+string(m.Status)]++
				}
				var parts []string
				for _, k := range slices.Sorted(maps.Keys(count)) {
					parts = append(parts, fmt.Sprintf("%d %s", count[k], k))
				}
				fmt.Fprintf(w, "messages  %s (runner inbox %s)\n", strings.Join(parts, ", "), t.ID)
			}
			fmt.Fprintf(w, "log       %s\n", t.Transcript)
			if t.ExitCode != nil {
				fmt.Fprintf(w, "exit code %d\n", *t.ExitCode)
			}
			fmt.Fprintf(w, "task      %s\n", runner.FirstLine(t.Text, 200))
			if t.TextFile != "" {
				fmt.Fprintf(w, "text      %s (the whole task text)\n", t.TextFile)
			}
			fmt.Fprintln(w, "history")
			for _, h := range t.History {
				fmt.Fprintf(w, "  %s  %-11s %s\n", h.Time.Local().Format("15:04:05.000"), h.Status, h.Reason)
			}
			if len(t.Turns) > 0 {
				fmt.Fprintln(w, "turns")
				for _, tr := range t.Turns {
					fmt.Fprintf(w, "  %s  %s\n", tr.Time.Local().Format("15:04:05"), tr.Summary)
				}
			}
			if t.Question != "" {
				fmt.Fprintf(w, "question\n  %s\n", strings.ReplaceAll(t.Question, "\n", "\n  "))
			}
			if t.ResultTail != "" {
				fmt.Fprintf(w, "result\n  %s\n", strings.ReplaceAll(t.ResultTail, "\n", "\n  "))
			}
			return nil
		},
	}
	a.jsonFlag(cmd, &asJSON)
	return cmd
}

func (a *app) newLogsCmd() *cobra.Command {
	var follow, raw bool
	cmd := &cobra.Command{
		Use:   "logs ID [-f] [--raw]",
		Short: "Print a task's transcript (escapes stripped unless --raw)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			env, _, err := a.runnerEnv(false)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			t, err := runner.GetTask(ctx, env, argv[0])
			if err != nil {
				return err
			}
			var off int64
			for {
				b, err := readFrom(t.Transcript, off)
				if err != nil && !errors.Is(err, os.ErrNotExist) {
					return fmt.Errorf("logs %s: %w", t.ID, err)
				}
				off += int64(len(b))
				if raw {
					_, _ = a.out.Write(b)
				} else {
					_, _ = io.WriteString(a.out, runner.StripANSI(strings.ReplaceAll(string(b), "\r\n", "\n")))
				}
				if !follow {
					return nil
				}
				if t, err = runner.GetTask(ctx, env, t.ID); err != nil {
					return err
				}
				if t.Status.IsTerminal() || t.Status == state.StatusOrphaned {
					b, _ := readFrom(t.Transcript, off)
					if raw {
						_, _ = a.out.Write(b)
					} else {
						_, _ = io.WriteString(a.out, runner.StripANSI(string(b)))
					}
					return nil
				}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(250 * time.Millisecond):
				}
			}
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing until the task ends")
	cmd.Flags().BoolVar(&raw, "raw", false, "keep terminal escape sequences")
	return cmd
}

func readFrom(path string, off int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(off, 0); err != nil {
		return nil, err
	}
	return io.ReadAll(f)
}

func (a *app) newAttachCmd() *cobra.Command {
	var printOnly bool
	cmd := &cobra.Command{
		Use:   "attach ID|PROJECT",
		Short: "Attach your terminal to a task's pane (or a project's session) with tmux",
		Long: `Attach to the task's window with tmux (switch-client when already inside tmux).
Detach again with the tmux prefix key and d (C-b d by default). With --print,
only print the tmux command.`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			env, _, err := a.runnerEnv(false)
			if err != nil {
				return err
			}
			target, err := runner.AttachTarget(cmd.Context(), env, argv[0])
			if err != nil {
				return err
			}
			if strings.HasPrefix(target, "%") {
				if err := env.TC.SelectPane(cmd.Context(), target); err != nil {
					return err
				}
			}
			inside := a.getenv("TMUX") != ""
			tmuxArgv := env.TC.AttachArgv(target, inside)
			if printOnly {
				fmt.Fprintln(a.out, strings.Join(tmuxArgv, " "))
				return nil
			}
			if fi, err := os.Stdin.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
				return runner.Usagef("attach needs a terminal; run: %s", strings.Join(tmuxArgv, " "))
			}
			return tmuxctl.Exec(tmuxArgv)
		},
	}
	cmd.Flags().BoolVar(&printOnly, "print", false, "print the tmux command instead of running it")
	return cmd
}

func (a *app) newWaitCmd() *cobra.Command {
	var (
		anyOne     bool
		untilInput bool
		all        bool
		project    string
		timeout    time.Duration
		asJSON     bool
		answer     bool
	)
	cmd := &cobra.Command{
		Use:   "wait ID... [--any] [--timeout D] | wait --all [--project P]",
		Short: "Block until tasks end; exit with the task's code",
		Long: `Block until the tasks end (with --any: the first of them), watching the state
directory (no polling). Exits with the task's code: 0 done, 1 failed or exited,
3 timed out, 4 needs input (with --input, waiting for input also ends the
wait). With several tasks the exit code is that of the first one, in argument
order, that did not end done. --timeout ends the wait itself with exit 3.

With --all (and no IDs): wait for every active task (of project P with
--project) at the time of the call, and for the tasks queued behind them
with --after, until all have ended. The exit code is that of the first task,
in dispatch order, that did not end done; 0 when there was nothing to wait for.`,
		Args: args(cobra.ArbitraryArgs),
		RunE: func(cmd *cobra.Command, argv []string) error {
			switch {
			case all && len(argv) > 0:
				return runner.Usagef("wait: give task IDs or --all, not both")
			case all && (anyOne || untilInput):
				return runner.Usagef("wait --all: --any and --input go with task IDs")
			case !all && project != "":
				return runner.Usagef("wait: --project goes with --all")
			case !all && len(argv) == 0:
				return runner.Usagef("wait: give task IDs, or --all for every active task")
			}
			// --all says on stderr which tasks it waits for.
			env, _, err := a.runnerEnv(all)
			if err != nil {
				return err
			}
			ctx, cancel := withTimeout(cmd.Context(), timeout)
			defer cancel()
			var tasks []*state.Task
			if all {
				tasks, err = runner.WaitAll(ctx, env, project)
			} else {
				tasks, err = runner.WaitTasks(ctx, env, argv, runner.WaitOptions{Any: anyOne, UntilInput: untilInput})
			}
			if err != nil {
				if errors.Is(err, context.DeadlineExceeded) {
					return fmt.Errorf("wait: tasks still running after %s: %w", timeout, tmuxctl.ErrTimeout)
				}
				return err
			}
			code := 0
			for _, t := range tasks {
				// Only tasks that ended the wait count: with --any the others
				// are still running (or waiting for input without --input).
				ended := t.Status.IsTerminal() || t.Status == state.StatusOrphaned || (untilInput && t.Status == state.StatusNeedsInput)
				if c := runner.TaskExitCode(t); code == 0 && c != 0 && ended {
					code = c
				}
			}
			if answer {
				a.printAnswers(tasks...)
			} else if asJSON {
				if tasks == nil {
					tasks = []*state.Task{}
				}
				if err := a.printJSON(tasks); err != nil {
					return err
				}
			} else {
				for _, t := range tasks {
					fmt.Fprintf(a.out, "%s %s\n", t.ID, t.Status)
				}
			}
			if code != 0 {
				return &runner.ExitError{Code: code}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&anyOne, "any", false, "return when the first task ends")
	cmd.Flags().BoolVar(&untilInput, "input", false, "also end the wait when a task needs input")
	cmd.Flags().BoolVar(&all, "all", false, "wait for every active task and the tasks queued behind them")
	cmd.Flags().StringVar(&project, "project", "", "with --all, only the tasks of this project: a registered name or a directory")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "give up waiting after this long (exit 3)")
	a.jsonFlag(cmd, &asJSON)
	answerFlag(cmd, &answer)
	return cmd
}

func (a *app) newCancelCmd() *cobra.Command {
	var (
		kill   bool
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "cancel ID [--kill]",
		Short: "Interrupt a task's agent and mark it cancelled (--kill closes its window and ends its processes)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			env, _, err := a.runnerEnv(false)
			if err != nil {
				return err
			}
			t, err := runner.Cancel(cmd.Context(), env, argv[0], kill)
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(t)
			}
			fmt.Fprintf(a.out, "%s %s\n", t.ID, t.Status)
			return nil
		},
	}
	cmd.Flags().BoolVar(&kill, "kill", false, "also close the task's tmux window and end every process it started (as runner gc does)")
	a.jsonFlag(cmd, &asJSON)
	return cmd
}

func (a *app) newSendCmd() *cobra.Command {
	var (
		file    string
		detach  bool
		timeout time.Duration
		asJSON  bool
		answer  bool
	)
	cmd := &cobra.Command{
		Use:   "send ID [TEXT]",
		Short: "Give a task's agent a follow-up prompt and wait for that turn",
		Long: `Deliver TEXT (or --file F / --file -) to the agent of a task whose last turn
ended, and wait for the new turn like dispatch does (exit code = outcome). With
--detach a supervisor waits and send returns at once.`,
		Args: args(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			text, err := a.readText(argv[1:], file)
			if err != nil {
				return err
			}
			env, _, err := a.runnerEnv(!asJSON)
			if err != nil {
				return err
			}
			var set *runner.RunSettings
			if timeout > 0 {
				t, err := runner.GetTask(cmd.Context(), env, argv[0])
				if err != nil {
					return err
				}
				var s runner.RunSettings
				_ = json.Unmarshal(t.Settings, &s)
				s.Timeout = timeout
				set = &s
			}
			if answer && (asJSON || detach) {
				return runner.Usagef("--print-answer waits for the answer: not with --json or --detach")
			}
			t, err := runner.Send(cmd.Context(), env, runner.SendRequest{Ref: argv[0], Text: text, Detach: detach, Settings: set})
			if t == nil {
				return err
			}
			if answer && !errors.Is(err, runner.ErrUsage) {
				a.printAnswers(t)
				if err != nil {
					return &runner.ExitError{Code: exitCode(err), Err: err}
				}
				return nil
			}
			if asJSON {
				if perr := a.printJSON(t); perr != nil {
					return perr
				}
				if err != nil {
					return &runner.ExitError{Code: exitCode(err)}
				}
				return nil
			}
			if errors.Is(err, runner.ErrUsage) {
				return err
			}
			if detach && err == nil {
				fmt.Fprintln(a.out, t.ID)
				return nil
			}
			a.printOutcome(t)
			return err
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "read the text from file F ('-' for standard input)")
	cmd.Flags().BoolVarP(&detach, "detach", "d", false, "return at once; a supervisor waits for the turn")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "give up on this turn after this long (default: the task's)")
	a.jsonFlag(cmd, &asJSON)
	answerFlag(cmd, &answer)
	return cmd
}

func (a *app) newResumeCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "resume ID",
		Short: "Start a new supervisor for an orphaned task (or one left waiting for input)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			env, _, err := a.runnerEnv(false)
			if err != nil {
				return err
			}
			t, pid, err := runner.Resume(cmd.Context(), env, argv[0])
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(t)
			}
			fmt.Fprintf(a.out, "%s resumed: supervisor %d (runner wait %s)\n", t.ID, pid, t.ID)
			return nil
		},
	}
	a.jsonFlag(cmd, &asJSON)
	return cmd
}
