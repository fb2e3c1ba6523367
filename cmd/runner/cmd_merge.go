package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/runner-cli/runner/cmd/runner/exitcode"
	"github.com/runner-cli/runner/cmd/runner/internal/cmdkit"
	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/worktree"
	"github.com/spf13/cobra"
)

func (a *app) newDiffCmd() *cobra.Command {
	var opts diffOptions
	cmd := &cobra.Command{
		Use:   "diff ID [--stat] [--json]",
		Short: "Show what a task changed since its snapshot (in its worktree, or in the project)",
		Long: `diff compares the task's snapshot (taken before it started) with the files as
they are now where the task works: its own worktree for a task dispatched with
--worktree (committed or not), else the project's directory. Untracked files
count; ignored ones do not. Exit 2 for an unknown task or one without a snapshot.`,
		Example: `  runner diff t_abc123
  runner diff t_mno345 --stat`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			return a.runDiff(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.stat, "stat", false, "the changed files only, not the patch")
	a.jsonFlag(cmd, &opts.asJSON)
	return cmd
}

// diffOptions are the arguments and flags of `runner diff`.
type diffOptions struct {
	args   []string
	stat   bool
	asJSON bool
}

func (a *app) runDiff(ctx context.Context, opts diffOptions) error {
	env, _, err := a.runnerEnv(false)
	if err != nil {
		return err
	}
	t, d, err := worktree.Diff(ctx, worktreeDeps(env), opts.args[0], gitsnap.DiffOptions{Patch: !opts.stat})
	if err != nil {
		return err
	}
	if opts.asJSON {
		return a.printJSON(map[string]any{"task": t.ID, "dir": t.Dir, "branch": t.Branch, "diff": d})
	}
	if len(d.Files) == 0 {
		fmt.Fprintf(a.out, "%s: no changes since its snapshot\n", t.ID)
		return nil
	}
	fmt.Fprint(a.out, d.Stat)
	if !opts.stat && d.Patch != "" {
		fmt.Fprintln(a.out)
		fmt.Fprint(a.rawOut, d.Patch) // byte for byte, as git prints it (git apply reads it back)
	}
	return nil
}

func (a *app) newMergeCmd() *cobra.Command {
	var opts mergeOptions
	cmd := &cobra.Command{
		Use:   "merge ID [--squash|--rebase] [--into BRANCH] [--message M] | merge --check ID [--into BRANCH] | merge --all",
		Short: "Bring a worktree task's branch back into the project's current branch (--check: forecast it; --all: every done one)",
		Long: `merge commits what the agent left uncommitted in the task's worktree (with the
trailer Runner-Task: ID), puts the branch's commits since the task's snapshot on
top of the branch checked out in the project's directory (or --into BRANCH:
where that branch is checked out, or in a temporary worktree), and merges them: a
merge commit (default), one squashed commit (--squash), or a fast-forward
(--rebase). The user's uncommitted work that the snapshot carried into the
worktree is not merged back: it is still in the project, uncommitted.

--check ID changes nothing (no worktree, index, ref, HEAD or stash, here or on
the task's host): it says whether merging the task (its uncommitted work
included) would conflict, on which files, and with which other unmerged task
branches of the same repository it conflicts (merging both: whichever goes
second stops), naming the files.

--all merges the unmerged branches of every done worktree task, one by one as
merge ID does, in an order that avoids the conflicts the forecast can avoid,
and stops at the first it cannot merge (nothing changed by that one); it
reports what it merged and what it left, and why.

Exit codes: 0 merged (--check: merges cleanly; --all: merged every done
task's branch); 1 the merge conflicts: nothing changed, the files are named
with the commands to resolve by hand (--check: a conflict is forecast, with
the branch or with another task's; --all: stopped at a conflict); 2 the task
has no worktree or its branch is gone, or the project has local changes in the
paths the merge touches (commit or stash them), or is mid-merge or on a
detached HEAD, or is no repository; 5 the task is still at work.`,
		Example: `  runner merge --check t_mno345
  runner merge t_mno345 --squash -m "add the /health endpoint"
  runner merge --all`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			switch {
			case opts.all && len(argv) > 0:
				return &cmdkit.FlagError{Err: fmt.Errorf("merge --all takes no task ID (merge ID merges one)")}
			case opts.all && opts.check:
				return &cmdkit.FlagError{Err: fmt.Errorf("--check and --all exclude each other (merge --check ID forecasts one task)")}
			case !opts.all && len(argv) != 1:
				return &cmdkit.FlagError{Err: fmt.Errorf("merge needs a task ID (or --all)")}
			case opts.check && (opts.req.Squash || opts.req.Rebase || opts.req.Message != ""):
				return &cmdkit.FlagError{Err: fmt.Errorf("--check forecasts a merge: --squash, --rebase and --message do not apply")}
			case opts.all && opts.req.Message != "":
				return &cmdkit.FlagError{Err: fmt.Errorf("--message names one merge: merge --all writes each task's own")}
			case opts.check:
				return a.runMergeCheck(cmd.Context(), opts)
			case opts.all:
				return a.runMergeAll(cmd.Context(), opts)
			}
			return a.runMerge(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.req.Squash, "squash", false, "one commit with all of the task's changes")
	cmd.Flags().BoolVar(&opts.req.Rebase, "rebase", false, "the task's commits on top of the branch, fast-forwarded (no merge commit)")
	cmd.Flags().StringVarP(&opts.req.Message, "message", "m", "", "the message of the merge or squash commit")
	cmd.Flags().StringVar(&opts.req.Into, "into", "", "merge into this branch instead of the project's current one (where it is checked out, or in a temporary worktree)")
	cmd.Flags().BoolVar(&opts.check, "check", false, "change nothing: forecast whether the merge conflicts, and with which other task branches (exit 1 if it does)")
	cmd.Flags().BoolVar(&opts.all, "all", false, "merge every done task's unmerged branch, in an order that avoids the conflicts it can; stop at the first it cannot")
	a.jsonFlag(cmd, &opts.asJSON)
	return cmd
}

// mergeOptions are the arguments and flags of `runner merge`.
type mergeOptions struct {
	args   []string
	req    worktree.MergeRequest
	check  bool
	all    bool
	asJSON bool
}

func (a *app) runMerge(ctx context.Context, opts mergeOptions) error {
	env, _, err := a.runnerEnv(false)
	if err != nil {
		return err
	}
	opts.req.Ref = opts.args[0]
	t, res, err := worktree.Merge(ctx, worktreeDeps(env), opts.req)
	if err != nil {
		return err
	}
	if opts.asJSON {
		return a.printJSON(map[string]any{"task": t.ID, "merge": res})
	}
	a.printMerged(t.ID, res)
	return nil
}

func (a *app) printMerged(id string, res *gitsnap.MergeResult) {
	if res.UpToDate {
		fmt.Fprintf(a.out, "%s: %s has nothing %s lacks\n", id, res.Branch, res.Into)
		return
	}
	fmt.Fprintf(a.out, "%s: merged %s into %s (%s): %s\n", id, res.Branch, res.Into, res.Mode, shortCommit(res.Commit))
}

// runMergeCheck prints the forecast of one task's merge; a conflict
// forecast exits 1 (nothing more printed).
func (a *app) runMergeCheck(ctx context.Context, opts mergeOptions) error {
	env, _, err := a.runnerEnv(false)
	if err != nil {
		return err
	}
	c, err := worktree.CheckMerge(ctx, worktreeDeps(env), worktree.CheckRequest{Ref: opts.args[0], Into: opts.req.Into})
	if err != nil {
		return err
	}
	if opts.asJSON {
		if err := a.printJSON(c); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(a.out, "%s: merging %s into %s: %s\n", c.Task, c.Branch, c.Into, textutil.VisibleLine(c.Outlook.String()))
	}
	if !c.Clean && !c.UpToDate {
		return &exitcode.Error{Code: exitcode.ExitFailed}
	}
	return nil
}

// runMergeAll merges every done task's branch it can and prints what it
// merged and left; stopped at a failed merge, it exits with that merge's
// code (1 for a conflict).
func (a *app) runMergeAll(ctx context.Context, opts mergeOptions) error {
	env, _, err := a.runnerEnv(false)
	if err != nil {
		return err
	}
	res, err := worktree.MergeAll(ctx, worktreeDeps(env), opts.req)
	if err != nil {
		return err
	}
	if opts.asJSON {
		out := map[string]any{"merged": res.Merged, "left": res.Left}
		if res.Stopped != "" {
			out["stopped"] = res.Stopped
		}
		if err := a.printJSON(out); err != nil {
			return err
		}
	} else {
		for _, m := range res.Merged {
			a.printMerged(m.Task, m.Merge)
		}
		if len(res.Merged) == 0 {
			fmt.Fprintln(a.out, "nothing merged")
		}
		for _, l := range res.Left {
			fmt.Fprintf(a.out, "%s: left %s: %s\n", l.Task, l.Branch, textutil.VisibleLine(l.Reason))
		}
	}
	if res.StopErr != nil {
		return &exitcode.Error{Code: exitcode.Of(res.StopErr)}
	}
	return nil
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

func (a *app) newWorktreeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "worktree",
		Short: "The git worktrees of tasks dispatched with --worktree",
		Example: `  runner dispatch api --detach --worktree "add tests for the parser"
  runner worktree list`,
		Args: args(cobra.NoArgs),
	}
	var opts worktreeOptions
	list := &cobra.Command{
		Use:   "list [--json]",
		Short: "List every runner/ worktree of the known repositories, merged or not",
		Long: `list reads git's own list of worktrees in every registered project and every
task's repository, so a worktree whose task record is gone is listed too
(TASK "-"). MERGED says whether the branch has anything its repository's
current branch lacks; runner gc removes merged ones of finished tasks.`,
		Example: `  runner worktree list
  runner worktree list --json`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runWorktree(cmd.Context(), opts)
		},
	}
	a.jsonFlag(list, &opts.asJSON)
	cmd.AddCommand(list)
	return cmd
}

// worktreeOptions are the arguments and flags of `runner worktree`.
type worktreeOptions struct {
	asJSON bool
}

func (a *app) runWorktree(ctx context.Context, opts worktreeOptions) error {
	env, _, err := a.runnerEnv(false)
	if err != nil {
		return err
	}
	list, err := worktree.List(ctx, worktreeDeps(env))
	if err != nil {
		return err
	}
	if opts.asJSON {
		if list == nil {
			list = []worktree.Info{}
		}
		return a.printJSON(list)
	}
	tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tSTATUS\tBRANCH\tMERGED\tFORECAST\tPATH")
	for _, w := range list {
		merged := "no"
		if w.Merged {
			merged = "yes"
		}
		path := w.Path
		if w.Host != "" {
			path = "host:" + w.Host + ":" + path
		}
		if w.Gone {
			path += " (deleted)"
		}
		forecast := w.Forecast.String()
		if w.Forecast != nil && w.Forecast.UpToDate {
			forecast = "-" // MERGED says it
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", textutil.OrDash(w.Task), textutil.OrDash(string(w.Status)), w.Branch, merged, textutil.VisibleLine(forecast), path)
	}
	return tw.Flush()
}
