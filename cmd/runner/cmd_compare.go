package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/group"
	"github.com/runner-cli/runner/runner/worktree"
	"github.com/runner-cli/runner/state"
	"github.com/spf13/cobra"
)

func (a *app) newCompareCmd() *cobra.Command {
	var asJSON bool
	var diff []string
	cmd := &cobra.Command{
		Use:   "compare GROUP",
		Short: "Show a group's candidates side by side (dispatch --agents/--tries)",
		Long: `Show each candidate of GROUP (the id 'dispatch --agents' or '--tries' printed, or a
unique prefix): its agent, its host (a group dispatched with --host), status, the
check's result, the files and lines it changed
from the group's snapshot, its spend, wall time, the merge forecast against the
project's branch, the other candidates that changed some of the same files, its
votes, and the first line of its answer.

--diff A B shows how candidate B's tree differs from candidate A's (task ids or
prefixes), untracked files included; both on one machine.`,
		Example: `  runner compare g_abc123
  runner compare g_abc123 --json`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			env, _, err := a.runnerEnv(false)
			if err != nil {
				return err
			}
			d := groupDeps(env)
			if len(diff) > 0 {
				return a.printBetween(cmd.Context(), d, argv[0], diff, asJSON)
			}
			c, err := group.Compare(cmd.Context(), d, argv[0])
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(c)
			}
			a.printComparison(c)
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&diff, "diff", nil, "A,B (or --diff A --diff B): how candidate B's tree differs from A's")
	a.jsonFlag(cmd, &asJSON)
	return cmd
}

// printBetween prints how one candidate's tree differs from another's.
func (a *app) printBetween(ctx context.Context, d group.Deps, ref string, pair []string, asJSON bool) error {
	if len(pair) != 2 {
		return fault.Usagef("--diff takes two candidates: --diff A,B")
	}
	res, err := group.Between(ctx, d, ref, pair[0], pair[1])
	if err != nil {
		if _, ok := err.(*group.NotMemberError); ok {
			return fault.Usagef("--diff: %v", err)
		}
		return err
	}
	if asJSON {
		return a.printJSON(res)
	}
	if res.Patch == "" {
		fmt.Fprintf(a.out, "%s and %s have the same files\n", pair[0], pair[1])
		return nil
	}
	fmt.Fprint(a.out, res.Stat)
	fmt.Fprintln(a.out)
	fmt.Fprint(a.out, res.Patch)
	return nil
}

// printComparison writes a group's candidates as a table.
func (a *app) printComparison(c *group.Comparison) {
	g := c.Group
	fmt.Fprintf(a.out, "group %s: %s\n", g.ID, g.Text)
	if g.Check != "" {
		fmt.Fprintf(a.out, "check: %s\n", g.Check)
	}
	tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
	// HOST only for a group with a candidate on a host.
	hostCol := func(string) string { return "" }
	for _, r := range c.Rows {
		if r.Host != "" {
			hostCol = func(h string) string { return textutil.OrDash(h) + "\t" }
		}
	}
	fmt.Fprintln(tw, "TASK\tAGENT\t"+hostCol("HOST")+"STATUS\tCHECK\tFILES\t+/-\tTOKENS\tWALL\tMERGE\tSAME FILES\tVOTES\tANSWER")
	for _, r := range c.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s%s\t%s\t%d\t+%d -%d\t%s\t%s\t%s\t%s\t%d\t%s\n", r.Task, r.Agent, hostCol(r.Host), r.Status, checkCell(g, r),
			r.Files, r.Insertions, r.Deletions, tokensCell(r.Tokens), (time.Duration(r.WallMS) * time.Millisecond).Round(time.Second),
			forecastCell(r), textutil.OrDash(strings.Join(r.SameFiles, ",")), r.Votes, textutil.Headline(r.Answer, 60))
	}
	tw.Flush()
	printBallot(a.out, g)
	if g.Picked != "" {
		fmt.Fprintf(a.out, "picked: %s (%s)\n", g.Picked, g.PickedBy)
	}
}

func checkCell(g *state.Group, r group.Row) string {
	switch {
	case g.Check == "":
		return "-"
	case r.Check == nil:
		return "not run"
	case r.Passed:
		return "passed"
	case r.Check.TimedOut:
		return "timed out"
	}
	return "exit " + strconv.Itoa(r.Check.Exit)
}

func tokensCell(n int64) string {
	if n == 0 {
		return "-"
	}
	return strconv.FormatInt(n, 10)
}

func forecastCell(r group.Row) string {
	switch f := r.Forecast; {
	case f == nil:
		return "?"
	case f.UpToDate:
		return "nothing"
	case len(f.Conflicts) > 0:
		return "conflict"
	case f.Clean:
		return "clean"
	}
	return "conflicts with others"
}

// printBallot writes a group's vote, if it has one.
func printBallot(w io.Writer, g *state.Group) {
	if g.Ballot == nil {
		return
	}
	fmt.Fprintf(w, "vote: %s\n", g.Ballot.Note)
	for _, b := range g.Ballot.Ballots {
		if b.Error != "" {
			fmt.Fprintf(w, "  %s (%s): no vote: %s\n", b.Voter, textutil.OrDash(b.Agent), b.Error)
			continue
		}
		fmt.Fprintf(w, "  %s (%s) → %s: %s\n", b.Voter, b.Agent, b.For, textutil.OrDash(b.Reason))
	}
}

func (a *app) newVoteCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "vote GROUP",
		Short: "Ask a group's candidates which other candidate did best",
		Long: `Once every candidate of GROUP has ended, ask each candidate that ended done (through
a shadow of it, as 'runner ask' does: its own conversation is untouched) which other
candidate did the task best, shown their answers, checks and diffs. Each ballot names
one candidate other than its own with a reason; the tally and the ballots are recorded
on the group (a second vote replaces the first). A candidate that cannot vote (it
failed, its agent has no headless mode, its answer names no other candidate) is said.
A tie names the tied candidates and has no winner.`,
		Example: `  runner vote g_abc123`,
		Args:    args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			env, _, err := a.runnerEnv(!asJSON)
			if err != nil {
				return err
			}
			res, err := group.VoteOn(cmd.Context(), groupDeps(env), argv[0])
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(res)
			}
			printBallot(a.out, res)
			return nil
		},
	}
	a.jsonFlag(cmd, &asJSON)
	return cmd
}

func (a *app) newPickCmd() *cobra.Command {
	var asJSON, drop, squash bool
	var by, into, message string
	cmd := &cobra.Command{
		Use:   "pick GROUP [TASK]",
		Short: "Merge the chosen candidate of a group and end the others",
		Long: `Merge one candidate of GROUP into the project's branch (as 'runner merge' does: what
its agent left is committed on its branch first; a conflict stops it, exit 1) and end
the others: their windows are closed, their worktrees and branches kept until 'runner
gc' (or removed now with --drop). A candidate on a host is first brought back: what
its agent left is committed there, its branch fetched into the repository here (one
pack over the host's connection), and merged here. Give TASK, or let --by choose:

  check  candidates done with a passing check (done, without a check), then the fewest
         files changed, then the fewest lines, then the fewest tokens
  vote   the most votes ('runner vote', or dispatch --vote) among the candidates done
         (and passing, with a check); a tie broken by the check rule
  spend  candidates done (and passing, with a check), then the fewest tokens, then the
         lowest cost

Ties left go to the candidate given first. A group still running, or picked already,
is bad input (exit 2); no candidate to pick (none passing, none with a vote that
passed the check) exits 1.`,
		Example: `  runner pick g_abc123 --by check --squash`,
		Args:    args(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			req := group.PickRequest{Group: argv[0], By: by, Drop: drop,
				Merge: worktree.MergeRequest{Into: into, Squash: squash, Message: message}}
			if len(argv) == 2 {
				if cmd.Flags().Changed("by") {
					return fault.Usagef("give TASK or --by, not both")
				}
				req.Task = argv[1]
			}
			env, _, err := a.runnerEnv(!asJSON)
			if err != nil {
				return err
			}
			res, err := group.Pick(cmd.Context(), groupDeps(env), req)
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(res)
			}
			fmt.Fprintf(a.out, "group %s: merged %s (%s)", res.Group, res.Task, res.By)
			if res.Host != "" {
				fmt.Fprintf(a.out, ", brought back from host %s (%d bytes)", res.Host, res.Bytes)
			}
			fmt.Fprintf(a.out, "; closed %s", textutil.OrDash(strings.Join(res.Closed, ", ")))
			if drop {
				fmt.Fprintf(a.out, "; dropped %s", textutil.OrDash(strings.Join(res.Dropped, ", ")))
			}
			fmt.Fprintln(a.out)
			for _, e := range res.Errors {
				fmt.Fprintf(a.errOut, "runner: %s\n", e)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&by, "by", group.ByCheck, "how to choose without TASK: check, vote or spend")
	cmd.Flags().BoolVar(&drop, "drop", false, "remove the other candidates' worktrees and branches now")
	cmd.Flags().BoolVar(&squash, "squash", false, "merge as one commit (as 'runner merge --squash')")
	cmd.Flags().StringVar(&into, "into", "", "merge into this branch instead of the project's current one")
	cmd.Flags().StringVarP(&message, "message", "m", "", "the merge commit's message")
	a.jsonFlag(cmd, &asJSON)
	return cmd
}

// newGroupSuperviseCmd is the hidden supervisor of a detached group.
func (a *app) newGroupSuperviseCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "group-supervise GROUP",
		Short:  "See a detached group through (started by dispatch --agents --detach)",
		Hidden: true,
		Args:   args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			env, _, err := a.runnerEnv(true)
			if err != nil {
				return err
			}
			_, _, err = group.Supervise(cmd.Context(), groupDeps(env), argv[0])
			return err
		},
	}
}
