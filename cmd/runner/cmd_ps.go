package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/group"
	"github.com/runner-cli/runner/runner/mailbox"
	"github.com/runner-cli/runner/runner/overlap"
	"github.com/runner-cli/runner/runner/tasks"
	"github.com/runner-cli/runner/state"
	"github.com/spf13/cobra"
)

func (a *app) newPsCmd() *cobra.Command {
	var opts psOptions
	cmd := &cobra.Command{
		Use:   "ps [--all] [--project P] [--host H]",
		Short: "List tasks (active ones; --all for finished too)",
		Long: `List tasks, newest first. Every call reconciles the state with the live
panes and supervisors: a task whose supervisor is gone becomes orphaned (resume
it with 'runner resume ID') or, when its pane is gone too, failed. ps never
contacts a host: tasks on every host are listed together (a HOST column names
each one's; a task waiting for a pool shows the pool), from the state here.`,
		Example: `  runner ps
  runner ps --all --project api
  runner ps --host local        # this machine's only (--host NAME: that host's)
  runner ps --json`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runPs(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.all, "all", false, "include finished tasks")
	cmd.Flags().StringVar(&opts.project, "project", "", "only tasks of this project: a registered name or a directory (./a, /x/b)")
	cmd.Flags().StringVar(&opts.host, "host", "", "only tasks on this host (local: this machine's)")
	a.jsonFlag(cmd, &opts.asJSON)
	return cmd
}

// psOptions are the arguments and flags of `runner ps`.
type psOptions struct {
	all     bool
	project string
	host    string
	asJSON  bool
}

func (a *app) runPs(ctx context.Context, opts psOptions) error {
	env, cfg, err := a.runnerEnv(false)
	if err != nil {
		return err
	}
	defer a.startAutoGC(ctx, env, cfg)
	list, err := tasks.List(ctx, tasksDeps(env), tasks.ListOptions{All: opts.all, Project: opts.project, Host: opts.host})
	if err != nil {
		return err
	}
	if err := markGroups(ctx, env.Store, list); err != nil {
		return err
	}
	if opts.asJSON {
		if list == nil {
			list = []*state.Task{}
		}
		return a.printJSON(list)
	}
	tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
	// A BRANCH column when some task works in a worktree of its own.
	branches := slices.ContainsFunc(list, func(t *state.Task) bool { return t.Branch != "" })
	// An OVERLAP column when another task changed some task's files.
	overlaps := slices.ContainsFunc(list, func(t *state.Task) bool { return len(t.Overlaps) > 0 })
	// A TOKENS column when some task's turns recorded what they used, or
	// a running turn what it used so far.
	spend := slices.ContainsFunc(list, func(t *state.Task) bool { return !t.SpendSoFar().IsZero() })
	// A HOST column when some task runs on another machine.
	hosts := slices.ContainsFunc(list, func(t *state.Task) bool { return t.Tmux.Host != "" || t.Tmux.Pool != "" })
	head := "ID\tPROJECT\t"
	if hosts {
		head += "HOST\t"
	}
	head += "AGENT\tSTATUS\tAGE\tLEVEL\tPARENT\t"
	// A GROUP column when some task is a candidate of a group.
	groups := slices.ContainsFunc(list, func(t *state.Task) bool { return t.Group != "" })
	if groups {
		head += "GROUP\t"
	}
	if branches {
		head += "BRANCH\t"
	}
	if overlaps {
		head += "OVERLAP\t"
	}
	if spend {
		head += "TOKENS\t"
	}
	fmt.Fprintln(tw, head+"TASK")
	now := clock.Now()
	for _, t := range list {
		proj := t.Project
		if proj == "" && t.Dir != "" {
			proj = filepath.Base(t.Dir)
		}
		parent := textutil.OrDash(t.Parent)
		if groups {
			parent += "\t" + textutil.OrDash(t.Group)
		}
		if branches {
			parent += "\t" + textutil.OrDash(t.Branch)
		}
		if overlaps {
			parent += "\t" + overlapCell(t)
		}
		if spend {
			parent += "\t" + t.SpendSoFar().Short()
		}
		if hosts {
			proj += "\t" + hostCell(t)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", t.ID, textutil.OrDash(proj), t.Agent, t.Status,
			textutil.Age(now, t.Created), t.Level, parent, textutil.VisibleLine(textutil.Headline(t.Text, 50)))
	}
	return tw.Flush()
}

// hostCell is a task's HOST: its host, "(pool P)" while it waits to be
// placed in a pool, "-" for this machine.
func hostCell(t *state.Task) string {
	if t.Tmux.Host == "" && t.Tmux.Pool != "" {
		return "(pool " + t.Tmux.Pool + ")"
	}
	return textutil.OrDash(t.Tmux.Host)
}

// markGroups sets the Group of the listed tasks that are candidates of a
// group (the index lists tasks without it).
func markGroups(ctx context.Context, store *state.Store, list []*state.Task) error {
	gs, err := store.Groups(ctx)
	if err != nil || len(gs) == 0 {
		return err
	}
	of := map[string]string{}
	for _, g := range gs {
		for _, id := range g.Tasks {
			of[id] = g.ID
		}
	}
	for _, t := range list {
		if g, ok := of[t.ID]; ok {
			t.Group = g
		}
	}
	return nil
}

// overlapCell names the tasks that changed some of t's files: "-", one id
// and its count of files, or the count of tasks.
func overlapCell(t *state.Task) string {
	switch len(t.Overlaps) {
	case 0:
		return "-"
	case 1:
		return fmt.Sprintf("%s(%d)", t.Overlaps[0].Task, len(t.Overlaps[0].Files))
	}
	return fmt.Sprintf("%d tasks", len(t.Overlaps))
}

func (a *app) newStatusCmd() *cobra.Command {
	var opts statusOptions
	cmd := &cobra.Command{
		Use:   "status ID",
		Short: "Show a task: lifecycle with times and reasons, snapshot, delivery, result",
		Long: `Show a task: its lifecycle with times and reasons, where it runs, its
snapshot, delivery and result. A task waiting for input (needs_input) shows
the dialog on its screen: the line that asks, its numbered options and its
digest, which 'runner answer' takes; --json has it as "dialog": {"digest",
"question", "options": [{"key", "label"}]}. --screen adds the pane's visible
text to the JSON ("screen").`,
		Example: `  runner status t_abc123
  runner status t_abc123 --json
  runner status t_jkl012 --json --screen`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			return a.runStatus(cmd.Context(), opts)
		},
	}
	a.jsonFlag(cmd, &opts.asJSON)
	cmd.Flags().BoolVar(&opts.screen, "screen", false, "with --json: add the pane's visible text (\"screen\")")
	return cmd
}

// statusOptions are the arguments and flags of `runner status`.
type statusOptions struct {
	args   []string
	asJSON bool
	screen bool
}

func (a *app) runStatus(ctx context.Context, opts statusOptions) error {
	env, cfg, err := a.runnerEnv(false)
	if err != nil {
		return err
	}
	defer a.startAutoGC(ctx, env, cfg)
	t, err := runner.GetTask(ctx, env, opts.args[0])
	if err != nil {
		return err
	}
	out := statusJSON{Task: t}
	if t.Status == state.StatusNeedsInput || opts.screen {
		if screen, ok := taskScreen(ctx, env, t); ok {
			out.Dialog, _ = taskDialog(env, t, screen)
			if opts.screen {
				out.Screen = &screen
			}
		}
	}
	if opts.asJSON {
		return a.printJSON(out)
	}
	a.printStatus(ctx, env, t)
	if out.Dialog != nil {
		printDialog(a.out, t.ID, out.Dialog)
	}
	printAnswerReceipts(a.out, t)
	return nil
}

// printStatus prints runner status of task t: its lifecycle, where it
// runs, what it produced.
func (a *app) printStatus(ctx context.Context, env *runner.Env, t *state.Task) {
	w := a.out
	printTaskPlace(w, t)
	printChanges(w, t)
	fmt.Fprintf(w, "delivery  %s\n", textutil.OrDash(t.Delivery))
	// GetTask reconciled already: the state as it is is enough.
	var msgs []mailbox.Entry
	st, _ := env.Store.Read(ctx)
	if st != nil {
		msgs, _ = mailbox.InboxOf(st, t.ID)
	}
	printTaskSpend(w, t, st)
	printMessageCounts(w, t.ID, msgs)
	printTaskRecord(w, t)
}

// printTaskPlace prints the head of status: what the task is and where it
// runs (project, agent, its place in a tree, pane, snapshot, branch and
// commit).
func printTaskPlace(w io.Writer, t *state.Task) {
	fmt.Fprintf(w, "task      %s (%s)\n", t.ID, t.Status)
	proj := t.Project
	if proj == "" {
		proj = "(path)"
	}
	fmt.Fprintf(w, "project   %s  %s\n", proj, t.Dir)
	fmt.Fprintf(w, "agent     %s\n", t.Agent)
	fmt.Fprintf(w, "level     %d  parent %s  source %s\n", t.Level, textutil.OrDash(t.Parent), textutil.OrDash(t.Source))
	if t.Group != "" {
		fmt.Fprintf(w, "group     %s (runner compare %s)\n", t.Group, t.Group)
	}
	if t.Check != nil {
		fmt.Fprintf(w, "check     %s: %s\n", t.Check.Command, group.CheckSummary(t.Check))
	}
	if len(t.After) > 0 {
		fmt.Fprintf(w, "after     %s\n", strings.Join(t.After, ", "))
	}
	if t.Tmux.Pool != "" {
		fmt.Fprintf(w, "pool      %s (placed on: %s)\n", t.Tmux.Pool, textutil.OrDash(t.Tmux.Host))
	}
	if t.Tmux.Host != "" {
		fmt.Fprintf(w, "pane      %s (host %s, session %s, socket %s there)\n", textutil.OrDash(t.Tmux.Pane), t.Tmux.Host, t.Tmux.Session, t.Tmux.Socket)
	} else {
		fmt.Fprintf(w, "pane      %s (session %s, socket %s)\n", textutil.OrDash(t.Tmux.Pane), t.Tmux.Session, t.Tmux.Socket)
	}
	if !t.Ports.IsZero() {
		fmt.Fprintf(w, "ports     %d-%d (RUNNER_PORT=%d, RUNNER_PORT_COUNT=%d in its pane)\n", t.Ports.First, t.Ports.Last(), t.Ports.First, t.Ports.Count)
	}
	if !t.Reclaimed.IsZero() {
		fmt.Fprintf(w, "reclaimed %s: window closed, processes ended (runner send %s TEXT starts the agent again)\n", t.Reclaimed.Local().Format(time.DateTime), t.ID)
	}
	if t.AgentSession != "" {
		fmt.Fprintf(w, "session   %s (the agent's own conversation id)\n", t.AgentSession)
	}
	fmt.Fprintf(w, "snapshot  %s\n", textutil.OrDash(t.SnapshotRef))
	if t.Branch != "" {
		fmt.Fprintf(w, "branch    %s in worktree %s, made from %s (runner diff %s, runner merge %s)\n", t.Branch, t.Dir, t.Origin, t.ID, t.ID)
	}
	if t.Commit != "" {
		fmt.Fprintf(w, "commit    %s\n", t.Commit)
	}
}

// printTaskSpend prints the usage limit the task waits on, and what it
// used: in all, in the turn that runs, and with the tasks it dispatched
// (from st; nil when the state could not be read).
func printTaskSpend(w io.Writer, t *state.Task, st *state.State) {
	if t.Status == state.StatusLimited {
		reset := "the CLI gave no reset time"
		if !t.LimitReset.IsZero() {
			reset = "resets " + t.LimitReset.Local().Format(time.DateTime)
		}
		fmt.Fprintf(w, "limit     %s: the agent's provider usage or rate limit (runner wait %s; runner cancel %s)\n", reset, t.ID, t.ID)
	}
	if !t.Spend.IsZero() {
		fmt.Fprintf(w, "spend     %s\n", spendLine(t.Spend))
	}
	if !t.Live.IsZero() {
		live := t.Live
		live.Turns = 1
		if t.Status.IsTerminal() {
			// The turn was cut short (cancel, timeout): what it had used.
			fmt.Fprintf(w, "unfinished %s in the last turn, which did not end (read while it ran)\n", live.String())
		} else {
			fmt.Fprintf(w, "running   %s so far in the turn that runs (read as it runs)\n", live.String())
		}
	}
	if st != nil {
		if tree, n := state.TreeSpend(st.TaskList(), t.ID); n > 1 {
			fmt.Fprintf(w, "tree      %s, in %d tasks (this one and those it dispatched)\n", spendLine(tree), n)
		}
	}
}

// printMessageCounts prints how many of task id's messages went each way
// in each status, if it has any.
func printMessageCounts(w io.Writer, id string, msgs []mailbox.Entry) {
	if len(msgs) > 0 {
		count := map[string]int{}
		for _, m := range msgs {
			count[m.Direction+" "+string(m.Status)]++
		}
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(count)) {
			parts = append(parts, fmt.Sprintf("%d %s", count[k], k))
		}
		fmt.Fprintf(w, "messages  %s (runner inbox %s)\n", strings.Join(parts, ", "), id)
	}
}

// printTaskRecord prints the rest of status: the log, the exit code, the
// task's text, the sandbox, and the record of its life (history, turns,
// the question, the last lines).
func printTaskRecord(w io.Writer, t *state.Task) {
	fmt.Fprintf(w, "log       %s\n", t.Transcript)
	if t.ExitCode != nil {
		fmt.Fprintf(w, "exit code %d\n", *t.ExitCode)
	}
	fmt.Fprintf(w, "task      %s\n", textutil.Headline(t.Text, 200))
	if t.TextFile != "" {
		fmt.Fprintf(w, "text      %s (the whole task text)\n", t.TextFile)
	}
	if len(t.Sandbox) > 0 {
		fmt.Fprintf(w, "sandbox   bwrap: read-only but %s\n", strings.Join(t.Sandbox, ", "))
	}
	fmt.Fprintln(w, "history")
	for _, h := range t.History {
		fmt.Fprintf(w, "  %s  %-11s %s\n", h.Time.Local().Format("15:04:05.000"), h.Status, h.Reason)
	}
	if len(t.Turns) > 0 {
		fmt.Fprintln(w, "turns")
		for _, tr := range t.Turns {
			sp := ""
			if !tr.Spend.IsZero() {
				sp = "  [" + tr.Spend.String() + "]"
			}
			fmt.Fprintf(w, "  %s  %s%s\n", tr.Time.Local().Format("15:04:05"), tr.Summary, sp)
		}
	}
	if t.Question != "" {
		fmt.Fprintf(w, "question\n  %s\n", strings.ReplaceAll(t.Question, "\n", "\n  "))
	}
	if t.ResultTail != "" {
		fmt.Fprintf(w, "result\n  %s\n", strings.ReplaceAll(t.ResultTail, "\n", "\n  "))
	}
}

// spendLine is a spend in status: its tokens, and how many turns it
// counts.
func spendLine(sp state.Spend) string {
	if !sp.Known() {
		return fmt.Sprintf("unknown (%d turn(s): the agent CLI recorded no usage)", sp.Unknown)
	}
	return fmt.Sprintf("%s over %d turn(s)", sp.String(), sp.Turns+sp.Unknown)
}

// printChanges prints what t changed so far and the tasks that changed the
// same files. File names come from the work tree: nothing in them reaches
// the terminal as a control sequence.
func printChanges(w io.Writer, t *state.Task) {
	c := t.Changes
	if c == nil {
		return
	}
	names := textutil.VisibleLine(overlap.Names(c.Files))
	switch {
	case !c.Merged.IsZero():
		fmt.Fprintf(w, "changed   %d file(s), merged %s\n", c.Count, c.Merged.Local().Format(time.DateTime))
	case c.Count == 0:
		fmt.Fprintf(w, "changed   nothing since the snapshot (as of %s)\n", c.Time.Local().Format("15:04:05"))
	case c.Shared:
		fmt.Fprintf(w, "changed   %d file(s) in the shared tree since the snapshot, this task's or not (tasks sharing a tree cannot be told apart; dispatch --worktree can): %s\n", c.Count, names)
	default:
		fmt.Fprintf(w, "changed   %d file(s): %s\n", c.Count, names)
	}
	for _, o := range t.Overlaps {
		fmt.Fprintf(w, "overlaps  %s: %s (runner msg %s TEXT)\n", o.Task, textutil.VisibleLine(overlap.Names(o.Files)), o.Task)
	}
}
