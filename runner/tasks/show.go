package tasks

import (
	"context"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/group"
	"github.com/runner-cli/runner/runner/mailbox"
	"github.com/runner-cli/runner/runner/overlap"
	"github.com/runner-cli/runner/state"
)

// Groups is where MarkGroups reads the groups (a *state.Store).
type Groups interface {
	Groups(ctx context.Context) (map[string]*state.Group, error)
}

// MarkGroups sets the Group of the listed tasks that are candidates of a
// group (the index lists tasks without it).
func MarkGroups(ctx context.Context, g Groups, list []*state.Task) error {
	gs, err := g.Groups(ctx)
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

// listColumns are the columns of WriteList that only some lists have.
type listColumns struct {
	hosts, groups, branches, overlaps, spend bool
}

// WriteList writes the table of `runner ps`: a line per task, with the
// HOST, GROUP, BRANCH, OVERLAP and TOKENS columns when some task has one;
// ages as of now.
func WriteList(w io.Writer, list []*state.Task, now time.Time) error {
	has := func(f func(t *state.Task) bool) bool { return slices.ContainsFunc(list, f) }
	c := listColumns{
		hosts:    has(func(t *state.Task) bool { return t.Tmux.Host != "" || t.Tmux.Pool != "" }),
		groups:   has(func(t *state.Task) bool { return t.Group != "" }),
		branches: has(func(t *state.Task) bool { return t.Branch != "" }),
		overlaps: has(func(t *state.Task) bool { return len(t.Overlaps) > 0 }),
		// what a task's turns recorded they used, or a running turn so far
		spend: has(func(t *state.Task) bool { return !t.SpendSoFar().IsZero() }),
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := "ID\tPROJECT\t"
	if c.hosts {
		head += "HOST\t"
	}
	head += "AGENT\tSTATUS\tAGE\tLEVEL\tPARENT\t"
	for _, col := range []struct {
		on   bool
		name string
	}{{c.groups, "GROUP\t"}, {c.branches, "BRANCH\t"}, {c.overlaps, "OVERLAP\t"}, {c.spend, "TOKENS\t"}} {
		if col.on {
			head += col.name
		}
	}
	fmt.Fprintln(tw, head+"TASK")
	for _, t := range list {
		writeListLine(tw, t, c, now)
	}
	return tw.Flush()
}

// writeListLine writes t's line of WriteList's table.
func writeListLine(w io.Writer, t *state.Task, c listColumns, now time.Time) {
	proj := t.Project
	if proj == "" && t.Dir != "" {
		proj = filepath.Base(t.Dir)
	}
	parent := textutil.OrDash(t.Parent)
	if c.groups {
		parent += "\t" + textutil.OrDash(t.Group)
	}
	if c.branches {
		parent += "\t" + textutil.OrDash(t.Branch)
	}
	if c.overlaps {
		parent += "\t" + overlapCell(t)
	}
	if c.spend {
		parent += "\t" + t.SpendSoFar().Short()
	}
	if c.hosts {
		proj += "\t" + hostCell(t)
	}
	fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", t.ID, textutil.OrDash(proj), t.Agent, t.Status,
		textutil.Age(now, t.Created), t.Level, parent, textutil.VisibleLine(textutil.Headline(t.Text, 50)))
}

// hostCell is a task's HOST: its host, "(pool P)" while it waits to be
// placed in a pool, "-" for this machine.
func hostCell(t *state.Task) string {
	if t.Tmux.Host == "" && t.Tmux.Pool != "" {
		return "(pool " + t.Tmux.Pool + ")"
	}
	return textutil.OrDash(t.Tmux.Host)
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

// WriteStatus writes `runner status` of task t: its lifecycle, where it
// runs, what it produced; st (nil when it could not be read) gives what
// its tree spent, msgs its messages.
func WriteStatus(w io.Writer, t *state.Task, st *state.State, msgs []mailbox.Entry) {
	writePlace(w, t)
	writeChanges(w, t)
	fmt.Fprintf(w, "delivery  %s\n", textutil.OrDash(t.Delivery))
	writeSpend(w, t, st)
	writeMessageCounts(w, t.ID, msgs)
	writeRecord(w, t)
}

// writePlace writes the head of status: what the task is and where it
// runs (project, agent, its place in a tree, pane, snapshot, branch and
// commit).
func writePlace(w io.Writer, t *state.Task) {
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
	writePane(w, t)
	fmt.Fprintf(w, "snapshot  %s\n", textutil.OrDash(t.SnapshotRef))
	if t.Branch != "" {
		fmt.Fprintf(w, "branch    %s in worktree %s, made from %s (runner diff %s, runner merge %s)\n", t.Branch, t.Dir, t.Origin, t.ID, t.ID)
	}
	if t.Commit != "" {
		fmt.Fprintf(w, "commit    %s\n", t.Commit)
	}
}

// writePane writes where t's pane is: its pool and host, the pane, its
// ports, whether its window was reclaimed, the agent's session.
func writePane(w io.Writer, t *state.Task) {
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
}

// writeSpend writes the usage limit the task waits on, and what it used:
// in all, in the turn that runs, and with the tasks it dispatched (from
// st; nil when the state could not be read).
func writeSpend(w io.Writer, t *state.Task, st *state.State) {
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

// writeMessageCounts writes how many of task id's messages went each way
// in each status, if it has any.
func writeMessageCounts(w io.Writer, id string, msgs []mailbox.Entry) {
	if len(msgs) == 0 {
		return
	}
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

// writeRecord writes the rest of status: the log, the exit code, the
// task's text, the sandbox, and the record of its life (history, turns,
// the question, the last lines).
func writeRecord(w io.Writer, t *state.Task) {
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

// writeChanges writes what t changed so far and the tasks that changed
// the same files. File names come from the work tree: nothing in them
// reaches the terminal as a control sequence.
func writeChanges(w io.Writer, t *state.Task) {
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

// WriteUsage writes rep as `runner usage`'s table: a line per group and
// the total; a count no turn knows is "?" (or "-" with no turn at all).
func WriteUsage(w io.Writer, rep *UsageReport) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tTASKS\tTURNS\tUNKNOWN\tINPUT\tOUTPUT\tCACHED\tTOKENS\tCOST\t\n", strings.ToUpper(rep.By))
	row := func(key string, tasks int, sp state.Spend) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t\n", key, tasks, sp.Turns, sp.Unknown,
			known(sp, sp.Input), known(sp, sp.Output), known(sp, sp.Cached), known(sp, sp.Tokens()), cost(sp))
	}
	for _, r := range rep.Rows {
		key := textutil.VisibleLine(r.Key)
		if r.Text != "" {
			key += "  " + textutil.VisibleLine(textutil.Headline(r.Text, 40))
		}
		row(key, r.Tasks, r.Spend)
	}
	row("total", rep.Tasks, rep.Total)
	return tw.Flush()
}

// known is n, or "?" when no turn of sp is known.
func known(sp state.Spend, n int64) string {
	if !sp.Known() {
		if sp.Unknown > 0 {
			return "?"
		}
		return "-"
	}
	return state.HumanCount(n)
}

// cost is sp's cost in dollars, "-" when no turn reported one.
func cost(sp state.Spend) string {
	if sp.Costed == 0 {
		return "-"
	}
	c := "$" + strconv.FormatFloat(sp.CostUSD, 'f', 4, 64)
	if sp.Costed < sp.Turns+sp.Unknown {
		c = "≥" + c
	}
	return c
}
