package statecmd

import (
	"context"
	"fmt"
	"time"

	"github.com/runner-cli/runner/cmd/runner/internal/cmdkit"
	"github.com/runner-cli/runner/runner/projects"
	"github.com/runner-cli/runner/runner/stateinfo"
	"github.com/runner-cli/runner/state"
	"github.com/spf13/cobra"
)

// cmds are the commands of `runner state` and `runner prune` over the
// factory they run on.
type cmds struct{ f *cmdkit.Factory }

// NewCmd builds `runner state` and its commands (path, show, repair) over
// f.
func NewCmd(f *cmdkit.Factory) *cobra.Command {
	sc := &cmds{f}
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
		Args: cmdkit.Args(cobra.NoArgs),
	}
	cmd.AddCommand(sc.newPathCmd(), sc.newShowCmd(), sc.newRepairCmd())
	return cmd
}

func (sc *cmds) newPathCmd() *cobra.Command {
	var opts statePathOptions
	cmd := &cobra.Command{
		Use:   "path",
		Short: "Print the path of the state file",
		Example: `  runner state path
  runner state path --json`,
		Args: cmdkit.Args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return sc.runStatePath(cmd.Context(), opts)
		},
	}
	sc.f.JSONFlag(cmd, &opts.asJSON, "print the directory and every file as JSON")
	return cmd
}

// statePathOptions are the arguments and flags of `runner state path`.
type statePathOptions struct {
	asJSON bool
}

func (sc *cmds) runStatePath(ctx context.Context, opts statePathOptions) error {
	s, err := sc.f.Store()
	if err != nil {
		return err
	}
	if opts.asJSON {
		return sc.f.PrintJSON(stateinfo.Paths(s))
	}
	fmt.Fprintln(sc.f.Out, s.Path())
	return nil
}

func (sc *cmds) newShowCmd() *cobra.Command {
	var opts stateShowOptions
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Print the projects and tasks in the state",
		Example: `  runner state show
  runner state show --json`,
		Args: cmdkit.Args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return sc.runStateShow(cmd.Context(), opts)
		},
	}
	sc.f.JSONFlag(cmd, &opts.asJSON, "print the whole state as JSON (archived tasks with their index fields)")
	return cmd
}

// stateShowOptions are the arguments and flags of `runner state show`.
type stateShowOptions struct {
	asJSON bool
}

func (sc *cmds) runStateShow(ctx context.Context, opts stateShowOptions) error {
	s, err := sc.f.Store()
	if err != nil {
		return err
	}
	if !opts.asJSON {
		return stateinfo.Summary(ctx, sc.f.Out, s, s.Path())
	}
	st, err := s.Read(ctx)
	if err != nil {
		return err
	}
	dump, err := stateinfo.Dump(st)
	if err != nil {
		return err
	}
	return sc.f.PrintJSON(dump)
}

func (sc *cmds) newRepairCmd() *cobra.Command {
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
		Args: cmdkit.Args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return sc.runStateRepair(cmd.Context(), opts)
		},
	}
	sc.f.JSONFlag(cmd, &opts.asJSON, "print the report as JSON")
	cmd.Flags().BoolVar(&opts.force, "force", false, "also move aside a state file written by a newer runner")
	return cmd
}

// stateRepairOptions are the arguments and flags of `runner state repair`.
type stateRepairOptions struct {
	asJSON bool
	force  bool
}

func (sc *cmds) runStateRepair(ctx context.Context, opts stateRepairOptions) error {
	s, err := sc.f.Store()
	if err != nil {
		return err
	}
	rep, err := s.Repair(ctx, opts.force)
	if err != nil {
		return err
	}
	if opts.asJSON {
		return sc.f.PrintJSON(rep)
	}
	stateinfo.WriteRepair(sc.f.Out, s.Path(), s.Dir(), rep)
	return nil
}

// NewPruneCmd builds `runner prune` over f.
func NewPruneCmd(f *cmdkit.Factory) *cobra.Command {
	sc := &cmds{f}
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
		Args: cmdkit.Args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.olderThanSet = cmd.Flags().Changed("older-than")
			return sc.runPrune(cmd.Context(), opts)
		},
	}
	sc.f.JSONFlag(cmd, &opts.asJSON, "print the pruned task ids as JSON")
	cmd.Flags().DurationVar(&opts.olderThan, "older-than", state.DefaultRetention, "prune tasks that ended longer ago than this (e.g. 1h, 30m, 0s for all; default the config's retention)")
	return cmd
}

// pruneOptions are the arguments and flags of `runner prune`.
type pruneOptions struct {
	asJSON       bool
	olderThan    time.Duration
	olderThanSet bool // --older-than was given
}

func (sc *cmds) runPrune(ctx context.Context, opts pruneOptions) error {
	s, err := sc.f.Store()
	if err != nil {
		return err
	}
	age, ok := stateinfo.PruneAge(opts.olderThan, opts.olderThanSet, s.Retention)
	if !ok {
		// retention 0 keeps finished tasks: nothing to prune.
		if opts.asJSON {
			return sc.f.PrintJSON(map[string][]string{"pruned": {}})
		}
		fmt.Fprintln(sc.f.Out, "pruned 0 finished task(s): the retention is 0, which keeps them (give --older-than D to prune now)")
		return nil
	}
	removed, err := projects.Prune(ctx, s, age)
	if err != nil {
		return err
	}
	if opts.asJSON {
		if removed == nil {
			removed = []string{}
		}
		return sc.f.PrintJSON(map[string][]string{"pruned": removed})
	}
	fmt.Fprintf(sc.f.Out, "pruned %d finished task(s)\n", len(removed))
	return nil
}
