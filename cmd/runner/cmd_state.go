package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/projects"
	"github.com/runner-cli/runner/state"
	"github.com/spf13/cobra"
)

func (a *app) newStateCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "state",
		Short: "Inspect and repair runner's shared state",
		Long: `runner keeps its projects and tasks in the state directory:
$RUNNER_STATE_DIR, else $XDG_STATE_HOME/runner, else ~/.local/state/runner.
state.json is the index (projects, the hot fields of active and recent tasks,
open and recent messages); tasks/<id>.<gen>.json holds each task's whole record;
archive/ holds finished tasks and messages the index no longer carries;
ops/ holds task changes handed to the process that holds the lock.`,
		Example: `  runner state show
  runner state path
  runner state repair`,
		Args: args(cobra.NoArgs),
	}
	cmd.AddCommand(a.newStatePathCmd(), a.newStateShowCmd(), a.newStateRepairCmd())
	return cmd
}

func (a *app) newStatePathCmd() *cobra.Command {
	var opts statePathOptions
	cmd := &cobra.Command{
		Use:   "path",
		Short: "Print the path of the state file",
		Example: `  runner state path
  runner state path --json`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runStatePath(cmd.Context(), opts)
		},
	}
	a.jsonFlag(cmd, &opts.asJSON, "print the directory and every file as JSON")
	return cmd
}

// statePathOptions are the arguments and flags of `runner state path`.
type statePathOptions struct {
	asJSON bool
}

func (a *app) runStatePath(ctx context.Context, opts statePathOptions) error {
	s, err := a.openStore()
	if err != nil {
		return err
	}
	if opts.asJSON {
		return a.printJSON(map[string]string{
			"dir":     s.Dir(),
			"state":   s.Path(),
			"lock":    s.Dir() + "/" + state.LockFile,
			"journal": s.Dir() + "/" + state.JournalFile,
			"records": s.Dir() + "/tasks",
			"archive": s.Dir() + "/archive",
			"ops":     s.Dir() + "/ops",
		})
	}
	fmt.Fprintln(a.out, s.Path())
	return nil
}

func (a *app) newStateShowCmd() *cobra.Command {
	var opts stateShowOptions
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Print the projects and tasks in the state",
		Example: `  runner state show
  runner state show --json`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runStateShow(cmd.Context(), opts)
		},
	}
	a.jsonFlag(cmd, &opts.asJSON, "print the whole state as JSON (archived tasks with their index fields)")
	return cmd
}

// stateShowOptions are the arguments and flags of `runner state show`.
type stateShowOptions struct {
	asJSON bool
}

func (a *app) runStateShow(ctx context.Context, opts stateShowOptions) error {
	s, err := a.openStore()
	if err != nil {
		return err
	}
	st, err := s.Read(ctx)
	if err != nil {
		return err
	}
	all, err := st.AllTasks()
	if err != nil {
		return err
	}
	if opts.asJSON {
		msgs, err := st.AllMessages()
		if err != nil {
			return err
		}
		tasks := make(map[string]*state.Task, len(all))
		for _, t := range all {
			tasks[t.ID] = t
		}
		// The archived tasks as the index shows them
		// ("archived": true; 'runner status ID' reads one whole).
		return a.printJSON(map[string]any{
			"version": st.Version, "generation": st.Generation, "updated": st.Updated,
			"projects": st.Projects, "tasks": tasks, "messages": msgs,
		})
	}
	return a.printState(s.Path(), st, all)
}

func (a *app) printState(path string, st *state.State, ts []*state.Task) error {
	updated := "never written"
	if !st.Updated.IsZero() {
		updated = "updated " + st.Updated.Local().Format(time.DateTime)
	}
	fmt.Fprintf(a.out, "%s (version %d, generation %d, %s)\n", path, st.Version, st.Generation, updated)
	ps := st.ProjectList()
	fmt.Fprintf(a.out, "\nProjects: %d\n", len(ps))
	w := tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
	for _, p := range ps {
		fmt.Fprintf(w, "  %s\t%s\n", p.Name, p.Dir)
	}
	w.Flush()
	counts := map[state.Status]int{}
	for _, t := range ts {
		counts[t.Status]++
	}
	var parts []string
	for _, s := range state.Statuses {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	summary := ""
	if len(parts) > 0 {
		summary = " (" + strings.Join(parts, ", ") + ")"
	}
	fmt.Fprintf(a.out, "\nTasks: %d%s, %d archived\n", len(ts), summary, st.ArchivedCount())
	for _, t := range ts {
		text := textutil.FirstLine(t.Text)
		if r := []rune(text); len(r) > 60 {
			text = string(r[:59]) + "…"
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\t%s\n", t.ID, dash(t.Project), dash(t.Agent), t.Status,
			t.Created.Local().Format(time.DateTime), text)
	}
	return w.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (a *app) newStateRepairCmd() *cobra.Command {
	var opts stateRepairOptions
	cmd := &cobra.Command{
		Use:   "repair",
		Short: "Move a corrupt state file aside and rebuild what can be rebuilt",
		Long: `repair moves a state.json that does not parse (or names a task record that is
gone) aside to state.json.corrupt-<time> and rebuilds the state from what is on
disk: the previous generation (state.json.prev), the newest record of each task
(tasks/<id>.<gen>.json), the archive segments that read, and the journal. Record
files nothing names any more are removed. A healthy state is left alone. A file written by a newer runner is
refused unless --force is given, which moves it aside to state.json.newer-<time>.`,
		Example: `  runner state repair
  runner state repair --json`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runStateRepair(cmd.Context(), opts)
		},
	}
	a.jsonFlag(cmd, &opts.asJSON, "print the report as JSON")
	cmd.Flags().BoolVar(&opts.force, "force", false, "also move aside a state file written by a newer runner")
	return cmd
}

// stateRepairOptions are the arguments and flags of `runner state repair`.
type stateRepairOptions struct {
	asJSON bool
	force  bool
}

func (a *app) runStateRepair(ctx context.Context, opts stateRepairOptions) error {
	s, err := a.openStore()
	if err != nil {
		return err
	}
	rep, err := s.Repair(ctx, opts.force)
	if err != nil {
		return err
	}
	if opts.asJSON {
		return a.printJSON(rep)
	}
	if rep.Healthy {
		fmt.Fprintf(a.out, "%s is healthy: nothing to repair\n", s.Path())
		return nil
	}
	from := "an empty state"
	if rep.FromPrevious {
		from = "the previous generation"
	}
	fmt.Fprintf(a.out, "moved the bad state file to %s\nrebuilt from %s, %d task record(s) and %d journal event(s): %d project(s), %d task(s), %d archived\n",
		rep.MovedTo, from, rep.FromRecords, rep.Replayed, rep.Projects, rep.Tasks, rep.Archived)
	if len(rep.DroppedSegments) > 0 {
		fmt.Fprintf(a.out, "archive segments that could not be read (their tasks are lost): %s\n", strings.Join(rep.DroppedSegments, ", "))
	}
	if rep.KeptNewer {
		fmt.Fprintf(a.out, "the newer runner's record files and archive in %s were kept as they are\n", s.Dir())
	}
	return nil
}

func (a *app) newPruneCmd() *cobra.Command {
	var opts pruneOptions

	cmd := &cobra.Command{
		Use:   "prune",
		Short: "Remove finished tasks from the state now",
		Long: `prune removes the records of finished tasks (done, failed, timeout, cancelled,
exited) that ended more than --older-than ago (default: the config's retention,
or $RUNNER_RETENTION; 24h unless set). Every change to the state also prunes
those older than the retention; a retention of 0 keeps them.`,
		Example: `  runner prune --older-than 1h
  runner prune --older-than 0s --json   # every finished task`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.olderThanSet = cmd.Flags().Changed("older-than")
			return a.runPrune(cmd.Context(), opts)
		},
	}
	a.jsonFlag(cmd, &opts.asJSON, "print the pruned task ids as JSON")
	cmd.Flags().DurationVar(&opts.olderThan, "older-than", state.DefaultRetention, "prune tasks that ended longer ago than this (e.g. 1h, 30m, 0s for all; default the config's retention)")
	return cmd
}

// pruneOptions are the arguments and flags of `runner prune`.
type pruneOptions struct {
	asJSON       bool
	olderThan    time.Duration
	olderThanSet bool // --older-than was given
}

func (a *app) runPrune(ctx context.Context, opts pruneOptions) error {
	s, err := a.openStore()
	if err != nil {
		return err
	}
	if !opts.olderThanSet {
		if s.Retention <= 0 {
			// retention 0 keeps finished tasks: nothing to prune.
			if opts.asJSON {
				return a.printJSON(map[string][]string{"pruned": {}})
			}
			fmt.Fprintln(a.out, "pruned 0 finished task(s): the retention is 0, which keeps them (give --older-than D to prune now)")
			return nil
		}
		opts.olderThan = s.Retention
	}
	removed, err := projects.Prune(ctx, s, opts.olderThan)
	if err != nil {
		return err
	}
	if opts.asJSON {
		if removed == nil {
			removed = []string{}
		}
		return a.printJSON(map[string][]string{"pruned": removed})
	}
	fmt.Fprintf(a.out, "pruned %d finished task(s)\n", len(removed))
	return nil
}
