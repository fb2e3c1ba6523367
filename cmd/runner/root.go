package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/runner-cli/runner/cmd/runner/exitcode"
	"github.com/runner-cli/runner/cmd/runner/internal/agentscmd"
	"github.com/runner-cli/runner/cmd/runner/internal/cmdkit"
	"github.com/runner-cli/runner/cmd/runner/internal/hostcmd"
	"github.com/runner-cli/runner/cmd/runner/internal/snapshotcmd"
	"github.com/runner-cli/runner/cmd/runner/internal/statecmd"
	"github.com/runner-cli/runner/cmd/runner/internal/tmuxcmd"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/confine"
	"github.com/runner-cli/runner/runner/door"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/profile"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// app carries what every command needs: the output streams, the environment
// and the global flags. No command writes to os.Stdout directly.
//
// out and errOut are for people: what is written there has its control
// characters made visible (textutil.Visible), since task texts, answers,
// questions and messages come from agents and may hold escapes that would
// act on the user's terminal (the clipboard, the title, the screen).
// rawOut and rawErr are the streams as given, for JSON (which escapes what
// it must and keeps the data exact), patches and raw logs, and the
// simulated agent, which draws on its terminal.
type app struct {
	in     io.Reader
	out    io.Writer
	errOut io.Writer
	rawOut io.Writer
	rawErr io.Writer
	getenv func(string) string

	socket string // --socket; empty means RUNNER_TMUX_SOCKET or "runner"

	// jsonErrors is set by commands running with --json, so the error is
	// printed as JSON too.
	jsonErrors bool

	args  []string // the command line, for a command runner-ext runs (runExt)
	flush func()   // writes out what out and errOut hold
}

const exitStatusHelp = `EXIT STATUS
  0    done
  1    task failed or agent error; a merge conflict (merge, merge --all) or a
       conflict forecast (merge --check)
  2    usage or bad input; a refused message or delegation (loop limits)
  3    timeout
  4    stopped on needs-input
  5    busy (a lock is held by someone else)
  6    a budget (--max-turns, --budget-tokens, --budget-usd) stopped the task
  7    the agent's usage or rate limit stopped the task (--on-limit fail)
  8    a group (dispatch --agents/--tries): some candidates succeeded, some
       did not (1: none did)
  130  interrupted (SIGINT or SIGTERM)
`

// Main runs the runner CLI with the given arguments and streams and returns
// the process exit code. SIGINT and SIGTERM cancel the command's context; an
// interrupted command returns 130.
func Main(args []string, in io.Reader, out, errOut io.Writer) int {
	if code, ok := quickHook(args, os.Getenv, in, errOut); ok {
		return code
	}
	ctx, stop := context.Background(), func() {}
	if !instant(commandName(args)) {
		ctx, stop = signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	}
	defer stop()
	if path := os.Getenv(door.EnvDoor); path != "" && throughDoor(args) {
		return callDoor(ctx, path, args, in, out, errOut)
	}
	a, flush := newApp(in, out, errOut, os.Getenv)
	defer flush()
	return a.run(ctx, args)
}

// instant reports whether cmd never waits, so never needs to end well on
// Ctrl-C: such a command runs without a signal handler, whose two threads
// made a third of `runner version`'s time in main (issue 51). Ctrl-C ends
// it at once.
func instant(cmd string) bool { return cmd == "version" || cmd == "status-line" }

// newApp returns the app over the given streams (see app: out and errOut
// made visible) and the function that flushes them at the end.
func newApp(in io.Reader, out, errOut io.Writer, getenv func(string) string) (*app, func()) {
	vOut, vErr := textutil.NewVisibleWriter(out), textutil.NewVisibleWriter(errOut)
	a := &app{in: in, out: vOut, errOut: vErr, rawOut: out, rawErr: errOut, getenv: getenv}
	a.flush = func() { vOut.Flush(); vErr.Flush() }
	return a, a.flush
}

func (a *app) run(ctx context.Context, args []string) int {
	// --json anywhere before "--" makes every error JSON, also those cobra
	// reports before a command runs (bad flags, missing arguments).
	a.jsonErrors = cmdkit.JSONArgs(args)
	a.args = args
	if len(args) > 1 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd) &&
		extReal == nil && extShort(commandName(args[1:])) != "" {
		// The shell completes a command of runner-ext's: it knows its flags.
		code := 0
		if err := a.runExt(args); err != nil {
			code = exitcode.Of(err)
			a.printError(err, code)
		}
		return code
	}
	root := a.newRoot(commandName(args))
	root.SetArgs(args)
	root.SetIn(a.in)
	root.SetOut(a.out)
	root.SetErr(a.errOut)
	err := root.ExecuteContext(ctx)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	code := exitcode.Of(err)
	if err != nil {
		a.printError(err, code)
	}
	return code
}

func (a *app) printError(err error, code int) {
	exitcode.Print(err, code, a.jsonErrors, a.errOut, a.rawErr)
}

// newRootCmd builds runner's whole command tree: help, completion and the
// generated docs need it.
func (a *app) newRootCmd() *cobra.Command { return a.newRoot("") }

// newRoot builds the root command with only the command named under it,
// when name is one of rootCommands (a hook, a door call, a supervisor or a
// script's `runner ps` starts in a few milliseconds: building every
// command's flags took 7% of `runner version`, issue 51), else with all.
func (a *app) newRoot(name string) *cobra.Command {
	root := &cobra.Command{
		Use:           "runner",
		Short:         "Drive CLI coding agents in tmux panes",
		SilenceErrors: true,
		SilenceUsage:  true,
		Example: `  runner project add shop ~/src/shop
  runner dispatch shop "add a /health endpoint"
  runner dispatch . --detach "add tests for the parser"
  runner ps --all`,
	}
	root.SetHelpTemplate(root.HelpTemplate() + "\n" + exitStatusHelp)
	// The description names every built-in agent, which loads their
	// profiles: only help shows it (describeRoot), not every command's start.
	help := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		describeRoot(c.Root())
		help(c, args)
	})
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error { return a.checks(c) }
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &cmdkit.FlagError{Err: err}
	})
	root.PersistentFlags().StringVar(&a.socket, "socket", "", cmdkit.SocketUsage)
	for _, g := range commandGroups {
		root.AddGroup(&cobra.Group{ID: g.id, Title: g.title})
	}
	root.SetHelpCommandGroupID(groupMachine)
	root.SetCompletionCommandGroupID(groupScripting)
	add := func(group string, c *cobra.Command) {
		if !c.Hidden {
			c.GroupID = group
		}
		root.AddCommand(c)
	}
	cmds := a.rootCommands()
	if i := slices.IndexFunc(cmds, func(c rootCommand) bool { return c.name == name }); i >= 0 && name != "" {
		add(cmds[i].group, cmds[i].build())
		// cobra builds its completion command, five of them with their
		// help texts, in every Execute unless told not to.
		root.CompletionOptions.DisableDefaultCmd = true
		return root
	}
	for _, c := range cmds {
		add(c.group, c.build())
	}
	for _, c := range a.docCommands() {
		add("", c)
	}
	return root
}

// rootCommand is one of runner's commands under the root: its name (the
// first word of its Use), its help group and what builds it.
type rootCommand struct {
	name, group string
	build       func() *cobra.Command
}

// rootCommands lists runner's commands in the order of `runner --help`
// (TestRootCommandsNamed holds each name to what its build gives).
func (a *app) rootCommands() []rootCommand {
	return []rootCommand{
		{"dispatch", groupEveryday, a.newDispatchCmd}, {"send", groupEveryday, a.newSendCmd},
		{"status", groupEveryday, a.newStatusCmd}, {"ps", groupEveryday, a.newPsCmd},
		{"wait", groupEveryday, a.newWaitCmd}, {"watch", groupEveryday, a.ext("watch")},
		{"logs", groupEveryday, a.newLogsCmd}, {"attach", groupEveryday, a.newAttachCmd},
		{"cancel", groupEveryday, a.newCancelCmd}, {"resume", groupEveryday, a.newResumeCmd},
		{"answer", groupEveryday, a.newAnswerCmd},
		{"msg", groupMany, a.newMsgCmd}, {"inbox", groupMany, a.newInboxCmd}, {"queue", groupMany, a.newQueueCmd},
		{"collect", groupMany, a.newCollectCmd}, {"ask", groupMany, a.newAskCmd}, {"tree", groupMany, a.newTreeCmd},
		{"diff", groupMany, a.newDiffCmd}, {"merge", groupMany, a.newMergeCmd}, {"worktree", groupMany, a.newWorktreeCmd},
		{"compare", groupMany, a.newCompareCmd}, {"vote", groupMany, a.newVoteCmd}, {"pick", groupMany, a.newPickCmd},
		{"gc", groupMachine, a.newGCCmd}, {"prune", groupMachine, a.family(statecmd.NewPruneCmd)}, {"state", groupMachine, a.family(statecmd.NewCmd)},
		{"host", groupMachine, a.family(hostcmd.NewCmd)}, {"doctor", groupMachine, a.newDoctorCmd},
		{"config", groupMachine, a.newConfigCmd}, {"usage", groupMachine, a.newUsageCmd},
		{"events", groupMachine, a.newEventsCmd}, {"project", groupMachine, a.newProjectCmd},
		{"snapshot", groupMachine, a.family(snapshotcmd.NewCmd)}, {"version", groupMachine, a.newVersionCmd},
		{"serve", groupMachine, a.ext("serve")},
		{"tmux", groupScripting, a.family(tmuxcmd.NewCmd)}, {"agents", groupScripting, a.family(agentscmd.NewCmd)},
		{"status-line", groupScripting, a.newStatusLineCmd}, {"mcp", groupScripting, a.ext("mcp")},
		// Hidden: the simulated agent, the supervisor and hook a dispatch
		// starts, the sandbox's exec, the push sender.
		{"agent-sim", "", a.newAgentSimCmd}, {"supervise", "", a.newSuperviseCmd}, {"hook", "", a.newHookCmd},
		{"group-supervise", "", a.newGroupSuperviseCmd}, {confine.SandboxExec, "", a.newSandboxExecCmd},
		{"push-send", "", a.ext("push-send")},
	}
}

// commandName is the command args run: the first argument after runner's
// own flag (--socket), or "" when a flag comes first (help, a bad flag).
func commandName(args []string) string {
	for i := 0; i < len(args); i++ {
		switch arg := args[i]; {
		case arg == "--socket":
			i++
		case strings.HasPrefix(arg, "--socket="):
		case strings.HasPrefix(arg, "-"):
			return ""
		default:
			return arg
		}
	}
	return ""
}

// The groups of `runner --help`, as a user meets them.
const (
	groupEveryday  = "everyday"
	groupMany      = "many"
	groupMachine   = "machine"
	groupScripting = "scripting"
)

var commandGroups = []struct{ id, title string }{
	{groupEveryday, "Everyday: run a task, follow it, answer it"},
	{groupMany, "Many agents: messages, shadows, lineage, worktrees"},
	{groupMachine, "The machine and its state"},
	{groupScripting, "Scripting and agent profiles"},
}

// describeRoot gives root (runner's) its description, once: help and the
// generated docs show it.
func describeRoot(root *cobra.Command) {
	if root.Long == "" {
		root.Long = rootLong()
	}
}

// rootLong is runner's description, naming every built-in agent from its
// profile (the description's name before its parenthesis), so that a new
// profile shows here without an edit.
func rootLong() string {
	var names []string
	for _, p := range profile.Builtins() {
		switch p.Name {
		case "sim", "shell":
			continue // the test agent; "any shell program" below
		}
		name, _, _ := strings.Cut(p.Description, " (")
		name, _, _ = strings.Cut(name, ";")
		names = append(names, strings.TrimSpace(name)+" ("+p.Name+")")
	}
	return textutil.Wrap("runner drives CLI coding agents inside tmux panes on a private tmux server, many at once, "+
		"from a terminal, a script or cron. Built in: "+strings.Join(names, ", ")+"; or any shell program (shell). "+
		"Add your own with an agent file (runner agents).", 78) + `

Start with:  runner dispatch PROJECT "TASK"     (PROJECT: a registered name or a path)
Attach to any pane with plain tmux: tmux -L runner attach.`
}

// printJSON writes v as indented JSON followed by a newline.
func (a *app) printJSON(v any) error { return cmdkit.PrintJSON(a.rawOut, v) }

// args wraps a cobra positional-argument validator so its errors exit 2
// (cmdkit.Args).
func args(v cobra.PositionalArgs) cobra.PositionalArgs { return cmdkit.Args(v) }

// checkConfined refuses, for a request that came through a sandboxed
// task's door (RUNNER_CONFINED), every command the door does not carry.
// The door checked it too; this holds if the door is ever bypassed.
func (a *app) checkConfined(c *cobra.Command) error {
	if a.getenv(door.EnvConfined) == "" {
		return nil
	}
	top := c
	for top.HasParent() && top.Parent().HasParent() {
		top = top.Parent()
	}
	if !slices.Contains(door.Commands, top.Name()) || top != c {
		name := top.Name()
		if top != c {
			name = c.CommandPath()[len("runner "):]
		}
		return fault.Usagef("'runner %s' is not open to a sandboxed task (it may use: runner %s)", name, strings.Join(door.Commands, ", runner "))
	}
	var bad []string
	c.Flags().Visit(func(f *pflag.Flag) {
		if !confinedFlag(c.Name(), f.Name) {
			bad = append(bad, "--"+f.Name)
		}
	})
	if len(bad) > 0 {
		return fault.Usagef("%s: not open to a sandboxed task with 'runner %s' (it may use: %s)", strings.Join(bad, ", "),
			c.Name(), "--"+strings.Join(confinedFlags(c.Name()), ", --"))
	}
	return nil
}
