package snapshotcmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/runner-cli/runner/cmd/runner/internal/cmdkit"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/snapshots"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/spf13/cobra"
)

// cmds are the commands of `runner snapshot` over the factory they run
// on, with the --host they were given.
type cmds struct {
	f    *cmdkit.Factory
	host string
}

// NewCmd builds `runner snapshot` and its commands (take, list, show,
// diff, restore, prune) over f.
func NewCmd(f *cmdkit.Factory) *cobra.Command {
	sn := &cmds{f: f}
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Record, compare and restore the state of a git work tree",
		Long: `Snapshots record a git work tree — tracked changes and untracked, non-ignored
files — as a commit under refs/runner/snapshots/<id>, without touching the
index, the work tree, HEAD, the branch or the stash. runner takes one before
every task; scripts can take their own before a risky step.

IDs accept unique prefixes. Commands other than take and list work on the
repository containing the current directory, or the one given with -C.

With --host NAME (see 'runner host'), they work on a repository of that
machine, over its shared ssh connection: give DIR as an absolute path there.`,
		Example: `  runner snapshot take --label "before the refactor"
  runner snapshot diff s_abc123 --stat
  runner snapshot restore s_abc123 --yes`,
		Args: cmdkit.Args(cobra.NoArgs),
	}
	var dir string
	cmd.PersistentFlags().StringVarP(&dir, "dir", "C", ".", "work on `DIR`: the whole work tree at its top; below it (a project inside a larger repository), diff and restore act on DIR's files only")
	cmd.PersistentFlags().StringVar(&sn.host, "host", "", "work on a repository of this registered host (runner host add); DIR absolute there")
	cmd.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		// The root's checks, which this hook replaces.
		if err := sn.f.Checks(c); err != nil {
			return err
		}
		if sn.host == "" {
			return nil
		}
		env, _, err := sn.f.Env(false)
		if err != nil {
			return err
		}
		ctx, err := env.Hosts.GitOn(c.Context(), sn.host)
		if err != nil {
			return err
		}
		c.SetContext(ctx)
		return nil
	}
	cmd.AddCommand(
		sn.newTakeCmd(&dir),
		sn.newListCmd(&dir),
		sn.newShowCmd(&dir),
		sn.newDiffCmd(&dir),
		sn.newRestoreCmd(&dir),
		sn.newPruneCmd(&dir),
	)
	return cmd
}

// snapshotDir is DIR from the arguments when given, else -C.
func snapshotDir(dir *string, argv []string) string {
	if len(argv) > 0 {
		return argv[0]
	}
	return *dir
}

func (sn *cmds) newTakeCmd(dir *string) *cobra.Command {
	opts := snapshotTakeOptions{dir: dir}
	cmd := &cobra.Command{
		Use:   "take [DIR]",
		Short: "Snapshot the work tree containing DIR (default: the current directory)",
		Example: `  runner snapshot take --label "before the migration"
  runner snapshot take ~/src/web --json`,
		Args: cmdkit.Args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			opts.host, _ = cmd.Flags().GetString("host")
			return sn.runSnapshotTake(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.take.Label, "label", "", "a one-line note stored with the snapshot")
	cmd.Flags().StringVar(&opts.take.ID, "id", "", "the snapshot's ID (default: s_ and 8 random characters)")
	sn.f.JSONFlag(cmd, &opts.asJSON)
	return cmd
}

// snapshotTakeOptions are the arguments and flags of `runner snapshot take`.
type snapshotTakeOptions struct {
	args   []string
	dir    *string // snapshot's -C
	host   string  // snapshot's --host
	take   gitsnap.Options
	asJSON bool
}

func (sn *cmds) runSnapshotTake(ctx context.Context, opts snapshotTakeOptions) error {
	s, err := gitsnap.Take(ctx, snapshotDir(opts.dir, opts.args), opts.take)
	if err != nil {
		return snapshots.Hint(err)
	}
	if opts.asJSON {
		return sn.f.PrintJSON(s)
	}
	snapshots.WriteTaken(sn.f.Out, s, opts.host)
	return nil
}

func (sn *cmds) newListCmd(dir *string) *cobra.Command {
	var opts snapshotListOptions
	opts.dir = dir
	cmd := &cobra.Command{
		Use:   "list [DIR]",
		Short: "List the snapshots of the repository containing DIR, newest first",
		Example: `  runner snapshot list
  runner snapshot list ~/src/web --json`,
		Args: cmdkit.Args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			return sn.runSnapshotList(cmd.Context(), opts)
		},
	}
	sn.f.JSONFlag(cmd, &opts.asJSON)
	return cmd
}

// snapshotListOptions are the arguments and flags of `runner snapshot list`.
type snapshotListOptions struct {
	args   []string
	asJSON bool
	dir    *string
}

func (sn *cmds) runSnapshotList(ctx context.Context, opts snapshotListOptions) error {
	snaps, err := gitsnap.List(ctx, snapshotDir(opts.dir, opts.args))
	if err != nil {
		return snapshots.Hint(err)
	}
	if opts.asJSON {
		if snaps == nil {
			snaps = []gitsnap.Snapshot{}
		}
		return sn.f.PrintJSON(snaps)
	}
	return snapshots.WriteList(sn.f.Out, snaps)
}

func (sn *cmds) newShowCmd(dir *string) *cobra.Command {
	var opts snapshotShowOptions
	opts.dir = dir
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show what a snapshot recorded",
		Example: `  runner snapshot show s_abc123
  runner snapshot show s_abc123 --json`,
		Args: cmdkit.Args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			return sn.runSnapshotShow(cmd.Context(), opts)
		},
	}
	sn.f.JSONFlag(cmd, &opts.asJSON)
	return cmd
}

// snapshotShowOptions are the arguments and flags of `runner snapshot show`.
type snapshotShowOptions struct {
	args   []string
	asJSON bool
	dir    *string
}

func (sn *cmds) runSnapshotShow(ctx context.Context, opts snapshotShowOptions) error {
	s, err := gitsnap.Get(ctx, *opts.dir, opts.args[0])
	err = sn.afterCommit(ctx, opts.args[0], err, func() (err error) {
		s, err = gitsnap.Get(ctx, *opts.dir, opts.args[0])
		return err
	})
	if err != nil {
		return snapshots.Hint(err)
	}
	if opts.asJSON {
		return sn.f.PrintJSON(s)
	}
	return snapshots.WriteShow(sn.f.Out, s)
}

func (sn *cmds) newDiffCmd(dir *string) *cobra.Command {
	var opts snapshotDiffOptions
	opts.dir = dir

	cmd := &cobra.Command{
		Use:   "diff ID",
		Short: "Show what changed since a snapshot (in the work tree, or in another snapshot with --against)",
		Example: `  runner snapshot diff s_abc123
  runner snapshot diff s_abc123 --stat`,
		Args: cmdkit.Args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			return sn.runSnapshotDiff(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.opts.Against, "against", "", "compare with snapshot `ID2` instead of the work tree")
	cmd.Flags().BoolVar(&opts.statOnly, "stat", false, "print only the stat, not the patch")
	sn.f.JSONFlag(cmd, &opts.asJSON)
	return cmd
}

// snapshotDiffOptions are the arguments and flags of `runner snapshot diff`.
type snapshotDiffOptions struct {
	args     []string
	opts     gitsnap.DiffOptions
	statOnly bool
	asJSON   bool
	dir      *string
}

func (sn *cmds) runSnapshotDiff(ctx context.Context, opts snapshotDiffOptions) error {
	opts.opts.Patch = !opts.statOnly
	d, err := gitsnap.Diff(ctx, *opts.dir, opts.args[0], opts.opts)
	err = sn.afterCommit(ctx, opts.args[0], err, func() (err error) {
		d, err = gitsnap.Diff(ctx, *opts.dir, opts.args[0], opts.opts)
		return err
	})
	if err != nil {
		return snapshots.Hint(err)
	}
	if opts.asJSON {
		return sn.f.PrintJSON(d)
	}
	snapshots.WriteDiff(sn.f.Out, sn.f.RawOut, d)
	return nil
}

// afterCommit is err, the error of a look for snapshot id, unless id is
// the snapshot of a task at work whose commit is still being written (a
// foreground task's record names its snapshot from its start, and the
// commit follows beside its first turn: snapshots.Committing): then what
// look finds once the commit is in the task's repository.
func (sn *cmds) afterCommit(ctx context.Context, id string, err error, look func() error) error {
	if !errors.Is(err, gitsnap.ErrNotFound) {
		return err
	}
	env, _, envErr := sn.f.Env(false)
	if envErr != nil || env == nil {
		return err
	}
	t, tErr := env.Record().Task(ctx, id) // a prefix names no task's snapshot ref
	if tErr != nil || t.SnapshotRef != gitsnap.RefPrefix+id || t.Tmux.Host != sn.host {
		return err
	}
	found := func() error {
		_, err := gitsnap.Get(ctx, t.Dir, id)
		return err
	}
	if snapshots.Committing(ctx, err, !t.Status.IsTerminal(), found) != nil {
		return err
	}
	return look()
}

// confirmSnapshot asks question on the terminal and returns nil on yes. With
// no terminal it refuses with a usage error saying what to do; no answer,
// or another, is a plain error: the command failed, nothing done.
func (sn *cmds) confirmSnapshot(question, what string) error {
	if !sn.f.IsTerminal(sn.f.In) {
		return fault.Usagef("%s; stdin is not a terminal, so nobody can confirm: pass --yes", what)
	}
	fmt.Fprint(sn.f.ErrOut, question)
	line, err := bufio.NewReader(sn.f.In).ReadString('\n')
	if err != nil && line == "" {
		return fmt.Errorf("%s: no answer, nothing done", what)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return fmt.Errorf("%s: not confirmed, nothing done", what)
}
