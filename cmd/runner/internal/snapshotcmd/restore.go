// runner snapshot restore and prune: the commands that change the work
// tree or delete snapshots.

package snapshotcmd

import (
	"context"
	"fmt"

	"github.com/runner-cli/runner/cmd/runner/internal/cmdkit"
	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/snapshots"
	"github.com/spf13/cobra"
)

func (sn *cmds) newRestoreCmd(dir *string) *cobra.Command {
	opts := snapshotRestoreOptions{dir: dir}
	cmd := &cobra.Command{
		Use:   "restore ID",
		Short: "Make the work tree's files exactly a snapshot's (undoable)",
		Long: `Restore makes the work tree's non-ignored files exactly those of the snapshot:
files created since are removed, deleted ones come back, contents, modes and
symlinks are the snapshot's. HEAD, the branch, the index and ignored files are
left alone; submodules are not recursed into. The current state is snapshot
first, so the restore can itself be undone with the ID it prints.

It asks for confirmation unless --yes is given; without a terminal and without
--yes it refuses (exit 2).`,
		Example: `  runner snapshot restore s_abc123 --yes`,
		Args:    cmdkit.Args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.id = argv[0]
			return sn.runSnapshotRestore(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.yes, "yes", "y", false, "do not ask for confirmation")
	sn.f.JSONFlag(cmd, &opts.asJSON)
	return cmd
}

// snapshotRestoreOptions are the arguments and flags of `runner snapshot
// restore`.
type snapshotRestoreOptions struct {
	id          string
	dir         *string // snapshot's -C
	yes, asJSON bool
}

func (sn *cmds) runSnapshotRestore(ctx context.Context, opts snapshotRestoreOptions) error {
	s, err := gitsnap.Get(ctx, *opts.dir, opts.id)
	err = sn.afterCommit(ctx, opts.id, err, func() (err error) {
		s, err = gitsnap.Get(ctx, *opts.dir, opts.id)
		return err
	})
	if err != nil {
		return snapshots.Hint(err)
	}
	if !opts.yes {
		if err := sn.confirmSnapshot(snapshots.RestoreQuestion(s), fmt.Sprintf("restore %s would overwrite files in %s", s.ID, s.Dir)); err != nil {
			return err
		}
	}
	res, err := gitsnap.Restore(ctx, s.Dir, s.ID)
	if err != nil {
		return snapshots.Hint(err)
	}
	if opts.asJSON {
		return sn.f.PrintJSON(res)
	}
	snapshots.WriteRestored(sn.f.Out, s, res, sn.host)
	return nil
}

func (sn *cmds) newPruneCmd(dir *string) *cobra.Command {
	var opts snapshotPruneOptions
	opts.dir = dir

	cmd := &cobra.Command{
		Use:   "prune",
		Short: "Delete snapshots older than an age (default 30d)",
		Example: `  runner snapshot prune
  runner snapshot prune --older-than 2w --json`,
		Args: cmdkit.Args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return sn.runSnapshotPrune(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.olderThan, "older-than", "30d", "age: a number with d (days) or w (weeks), or a Go duration such as 12h")
	sn.f.JSONFlag(cmd, &opts.asJSON)
	return cmd
}

// snapshotPruneOptions are the arguments and flags of `runner snapshot prune`.
type snapshotPruneOptions struct {
	olderThan string
	asJSON    bool
	dir       *string
}

func (sn *cmds) runSnapshotPrune(ctx context.Context, opts snapshotPruneOptions) error {
	age, err := snapshots.ParseAge(opts.olderThan)
	if err != nil {
		return err
	}
	pruned, err := gitsnap.Prune(ctx, *opts.dir, age)
	if err != nil {
		return snapshots.Hint(err)
	}
	if opts.asJSON {
		if pruned == nil {
			pruned = []gitsnap.Snapshot{}
		}
		return sn.f.PrintJSON(pruned)
	}
	snapshots.WritePruned(sn.f.Out, pruned, opts.olderThan)
	return nil
}
