package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/runner-cli/runner/internal/transport"
	"github.com/runner-cli/runner/runner/fault"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

func (a *app) newSnapshotCmd() *cobra.Command {
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
		Args: args(cobra.NoArgs),
	}
	var dir, host string
	cmd.PersistentFlags().StringVarP(&dir, "dir", "C", ".", "work on `DIR`: the whole work tree at its top; below it (a project inside a larger repository), diff and restore act on DIR's files only")
	cmd.PersistentFlags().StringVar(&host, "host", "", "work on a repository of this registered host (runner host add); DIR absolute there")
	cmd.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		// The root's checks, which this hook replaces.
		if err := a.checkConfined(c); err != nil {
			return err
		}
		if err := checkDurations(c); err != nil {
			return err
		}
		if host == "" {
			return nil
		}
		env, _, err := a.runnerEnv(false)
		if err != nil {
			return err
		}
		ctx, err := env.GitOn(c.Context(), host)
		if err != nil {
			return err
		}
		c.SetContext(ctx)
		return nil
	}
	cmd.AddCommand(
		a.newSnapshotTakeCmd(&dir),
		a.newSnapshotListCmd(&dir),
		a.newSnapshotShowCmd(&dir),
		a.newSnapshotDiffCmd(&dir),
		a.newSnapshotRestoreCmd(&dir),
		a.newSnapshotPruneCmd(&dir),
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

// snapshotErr adds what to do to the errors a user can fix.
func snapshotErr(err error) error {
	switch {
	case errors.Is(err, gitsnap.ErrNotRepo):
		return fmt.Errorf("%w (snapshots need a git work tree: run 'git init' there first, or name the repository: 'runner snapshot take DIR' or '-C DIR')", err)
	case errors.Is(err, gitsnap.ErrBareRepo):
		return fmt.Errorf("%w (name a checked-out work tree instead)", err)
	}
	return err
}

func (a *app) newSnapshotTakeCmd(dir *string) *cobra.Command {
	opts := snapshotTakeOptions{dir: dir}
	cmd := &cobra.Command{
		Use:   "take [DIR]",
		Short: "Snapshot the work tree containing DIR (default: the current directory)",
		Example: `  runner snapshot take --label "before the migration"
  runner snapshot take ~/src/web --json`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			opts.host, _ = cmd.Flags().GetString("host")
			return a.runSnapshotTake(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.take.Label, "label", "", "a one-line note stored with the snapshot")
	cmd.Flags().StringVar(&opts.take.ID, "id", "", "the snapshot's ID (default: s_ and 8 random characters)")
	a.jsonFlag(cmd, &opts.asJSON)
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

func (a *app) runSnapshotTake(ctx context.Context, opts snapshotTakeOptions) error {
	s, err := gitsnap.Take(ctx, snapshotDir(opts.dir, opts.args), opts.take)
	if err != nil {
		return snapshotErr(err)
	}
	if opts.asJSON {
		return a.printJSON(s)
	}
	fmt.Fprintf(a.out, "snapshot %s of %s: %s (%s)\n", s.ID, s.Dir, describeState(s), s.Duration.Round(time.Millisecond))
	hostArg := ""
	if opts.host != "" {
		hostArg = " --host " + opts.host
	}
	fmt.Fprintf(a.out, "  diff:    runner snapshot%s diff -C %s %s\n", hostArg, transport.QuoteIfNeeded(s.Dir), s.ID)
	fmt.Fprintf(a.out, "  restore: runner snapshot%s restore -C %s %s\n", hostArg, transport.QuoteIfNeeded(s.Dir), s.ID)
	return nil
}

func (a *app) newSnapshotListCmd(dir *string) *cobra.Command {
	var opts snapshotListOptions
	opts.dir = dir
	cmd := &cobra.Command{
		Use:   "list [DIR]",
		Short: "List the snapshots of the repository containing DIR, newest first",
		Example: `  runner snapshot list
  runner snapshot list ~/src/web --json`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			return a.runSnapshotList(cmd.Context(), opts)
		},
	}
	a.jsonFlag(cmd, &opts.asJSON)
	return cmd
}

// snapshotListOptions are the arguments and flags of `runner snapshot list`.
type snapshotListOptions struct {
	args   []string
	asJSON bool
	dir    *string
}

func (a *app) runSnapshotList(ctx context.Context, opts snapshotListOptions) error {
	snaps, err := gitsnap.List(ctx, snapshotDir(opts.dir, opts.args))
	if err != nil {
		return snapshotErr(err)
	}
	if opts.asJSON {
		if snaps == nil {
			snaps = []gitsnap.Snapshot{}
		}
		return a.printJSON(snaps)
	}
	if len(snaps) == 0 {
		fmt.Fprintln(a.out, "no snapshots")
		return nil
	}
	tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTIME\tBASE\tCHANGES\tLABEL")
	for _, s := range snaps {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.ID, s.Time.Local().Format("2006-01-02 15:04:05"),
			shortBase(&s), describeCounts(&s), s.Label)
	}
	return tw.Flush()
}

func (a *app) newSnapshotShowCmd(dir *string) *cobra.Command {
	var opts snapshotShowOptions
	opts.dir = dir
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show what a snapshot recorded",
		Example: `  runner snapshot show s_abc123
  runner snapshot show s_abc123 --json`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			return a.runSnapshotShow(cmd.Context(), opts)
		},
	}
	a.jsonFlag(cmd, &opts.asJSON)
	return cmd
}

// snapshotShowOptions are the arguments and flags of `runner snapshot show`.
type snapshotShowOptions struct {
	args   []string
	asJSON bool
	dir    *string
}

func (a *app) runSnapshotShow(ctx context.Context, opts snapshotShowOptions) error {
	s, err := gitsnap.Get(ctx, *opts.dir, opts.args[0])
	if err != nil {
		return snapshotErr(err)
	}
	if opts.asJSON {
		return a.printJSON(s)
	}
	tw := tabwriter.NewWriter(a.out, 0, 4, 1, ' ', 0)
	fmt.Fprintf(tw, "id:\t%s\n", s.ID)
	if s.Label != "" {
		fmt.Fprintf(tw, "label:\t%s\n", s.Label)
	}
	fmt.Fprintf(tw, "time:\t%s\n", s.Time.Local().Format(time.RFC3339))
	fmt.Fprintf(tw, "dir:\t%s\n", s.Dir)
	base := "none (unborn HEAD)"
	if s.Base != "" {
		base = s.Base
		if s.Branch != "" {
			base += " (" + s.Branch + ")"
		} else {
			base += " (detached HEAD)"
		}
	}
	fmt.Fprintf(tw, "base:\t%s\n", base)
	fmt.Fprintf(tw, "state:\t%s\n", describeState(s))
	fmt.Fprintf(tw, "ref:\t%s\n", s.Ref)
	fmt.Fprintf(tw, "commit:\t%s\n", s.Commit)
	fmt.Fprintf(tw, "tree:\t%s\n", s.Tree)
	return tw.Flush()
}

func (a *app) newSnapshotDiffCmd(dir *string) *cobra.Command {
	var opts snapshotDiffOptions
	opts.dir = dir

	cmd := &cobra.Command{
		Use:   "diff ID",
		Short: "Show what changed since a snapshot (in the work tree, or in another snapshot with --against)",
		Example: `  runner snapshot diff s_abc123
  runner snapshot diff s_abc123 --stat`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			return a.runSnapshotDiff(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.opts.Against, "against", "", "compare with snapshot `ID2` instead of the work tree")
	cmd.Flags().BoolVar(&opts.statOnly, "stat", false, "print only the stat, not the patch")
	a.jsonFlag(cmd, &opts.asJSON)
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

func (a *app) runSnapshotDiff(ctx context.Context, opts snapshotDiffOptions) error {
	opts.opts.Patch = !opts.statOnly
	d, err := gitsnap.Diff(ctx, *opts.dir, opts.args[0], opts.opts)
	if err != nil {
		return snapshotErr(err)
	}
	if opts.asJSON {
		return a.printJSON(d)
	}
	if len(d.Files) == 0 {
		fmt.Fprintf(a.out, "no changes from %s to %s\n", d.From, d.To)
		return nil
	}
	io.WriteString(a.out, d.Stat)
	if d.Patch != "" {
		fmt.Fprintln(a.out)
		io.WriteString(a.rawOut, d.Patch) // byte for byte, as git prints it (git apply reads it back)
	}
	return nil
}

func parseAge(s string) (time.Duration, error) {
	bad := fault.Usagef("--older-than %q: want a number with d (days) or w (weeks), or a duration such as 12h", s)
	for suffix, unit := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			v, err := strconv.Atoi(n)
			if err != nil || v < 0 {
				return 0, bad
			}
			return time.Duration(v) * unit, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, bad
	}
	return d, nil
}

// describeState is "clean" or the counts of changed paths.
func describeState(s *gitsnap.Snapshot) string {
	if !s.Dirty {
		return "clean (same as HEAD)"
	}
	return fmt.Sprintf("%d changed paths since HEAD (%d added, %d modified, %d deleted)",
		s.Counts.Total(), s.Counts.Added, s.Counts.Modified, s.Counts.Deleted)
}

func describeCounts(s *gitsnap.Snapshot) string {
	if !s.Dirty {
		return "clean"
	}
	return fmt.Sprintf("+%d ~%d -%d", s.Counts.Added, s.Counts.Modified, s.Counts.Deleted)
}

func shortBase(s *gitsnap.Snapshot) string {
	if s.Base == "" {
		return "(unborn)"
	}
	return s.Base[:min(10, len(s.Base))]
}

// snapshotIsTerminal reports whether r is a terminal. Tests swap it.
var snapshotIsTerminal = func(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	return term.IsTerminal(int(f.Fd()))
}

// confirmSnapshot asks question on the terminal and returns nil on yes. With
// no terminal it refuses with a usage error (exit 2) saying what to do.
func (a *app) confirmSnapshot(question, what string) error {
	if !snapshotIsTerminal(a.in) {
		return fault.Usagef("%s; stdin is not a terminal, so nobody can confirm: pass --yes", what)
	}
	fmt.Fprint(a.errOut, question)
	line, err := bufio.NewReader(a.in).ReadString('\n')
	if err != nil && line == "" {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("%s: no answer, nothing done", what)}
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return &ExitError{Code: ExitFailed, Err: fmt.Errorf("%s: not confirmed, nothing done", what)}
}
