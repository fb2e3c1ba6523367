package snapshots

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/internal/transport"
	"github.com/runner-cli/runner/runner/fault"
)

// ParseAge reads an age: a number with d (days) or w (weeks), or a Go
// duration ("12h", "90m"); anything else, or a negative one, is a usage
// error naming --older-than.
func ParseAge(s string) (time.Duration, error) {
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

// Hint adds what to do to the errors a user can fix (not a repository, a
// bare one); any other error is returned as it is.
func Hint(err error) error {
	switch {
	case errors.Is(err, gitsnap.ErrNotRepo):
		return fmt.Errorf("%w (snapshots need a git work tree: run 'git init' there first, or name the repository: 'runner snapshot take DIR' or '-C DIR')", err)
	case errors.Is(err, gitsnap.ErrBareRepo):
		return fmt.Errorf("%w (name a checked-out work tree instead)", err)
	}
	return err
}

// describeState is "clean" or the counts of changed paths.
func describeState(s *gitsnap.Snapshot) string {
	if !s.Dirty {
		return "clean (same as HEAD)"
	}
	return fmt.Sprintf("%d changed paths since HEAD (%d added, %d modified, %d deleted)",
		s.Counts.Total(), s.Counts.Added, s.Counts.Modified, s.Counts.Deleted)
}

// describeCounts is "clean" or the counts of changed paths, short.
func describeCounts(s *gitsnap.Snapshot) string {
	if !s.Dirty {
		return "clean"
	}
	return fmt.Sprintf("+%d ~%d -%d", s.Counts.Added, s.Counts.Modified, s.Counts.Deleted)
}

// shortBase is the snapshot's base commit, short.
func shortBase(s *gitsnap.Snapshot) string {
	if s.Base == "" {
		return "(unborn)"
	}
	return s.Base[:min(10, len(s.Base))]
}

// hostArg is the --host flag that reaches host again ("" for this
// machine).
func hostArg(host string) string {
	if host == "" {
		return ""
	}
	return " --host " + host
}

// WriteTaken writes what take took and the commands that diff against it
// and restore it (with --host host when on one).
func WriteTaken(w io.Writer, s *gitsnap.Snapshot, host string) {
	fmt.Fprintf(w, "snapshot %s of %s: %s (%s)\n", s.ID, s.Dir, describeState(s), s.Duration.Round(time.Millisecond))
	fmt.Fprintf(w, "  diff:    runner snapshot%s diff -C %s %s\n", hostArg(host), transport.QuoteIfNeeded(s.Dir), s.ID)
	fmt.Fprintf(w, "  restore: runner snapshot%s restore -C %s %s\n", hostArg(host), transport.QuoteIfNeeded(s.Dir), s.ID)
}

// WriteList writes the snapshots as a table, or that there are none.
func WriteList(w io.Writer, snaps []gitsnap.Snapshot) error {
	if len(snaps) == 0 {
		_, err := fmt.Fprintln(w, "no snapshots")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTIME\tBASE\tCHANGES\tLABEL")
	for _, s := range snaps {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.ID, s.Time.Local().Format(time.DateTime),
			shortBase(&s), describeCounts(&s), s.Label)
	}
	return tw.Flush()
}

// WriteShow writes what a snapshot recorded, a field a line.
func WriteShow(w io.Writer, s *gitsnap.Snapshot) error {
	tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', 0)
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

// WriteDiff writes a diff's stat to w and its patch to raw, byte for
// byte as git prints it (git apply reads it back); or that nothing
// changed.
func WriteDiff(w, raw io.Writer, d *gitsnap.DiffResult) {
	if len(d.Files) == 0 {
		fmt.Fprintf(w, "no changes from %s to %s\n", d.From, d.To)
		return
	}
	io.WriteString(w, d.Stat)
	if d.Patch != "" {
		fmt.Fprintln(w)
		io.WriteString(raw, d.Patch)
	}
}

// RestoreQuestion is what restore asks before it overwrites s's files.
func RestoreQuestion(s *gitsnap.Snapshot) string {
	return fmt.Sprintf("Restore %s (%s) over the files in %s? The current state is snapshot first. [y/N] ",
		s.ID, s.Time.Local().Format(time.DateTime), s.Dir)
}

// WriteRestored writes what a restore of s did, the submodules it left
// and the command that undoes it (with --host host when on one).
func WriteRestored(w io.Writer, s *gitsnap.Snapshot, res *gitsnap.RestoreResult, host string) {
	fmt.Fprintf(w, "restored %s in %s: %d paths written or removed\n", s.ID, s.Dir, len(res.Changes))
	for _, ch := range res.Skipped {
		fmt.Fprintf(w, "  skipped submodule %s (submodules are not restored)\n", ch.Path)
	}
	fmt.Fprintf(w, "undo with: runner snapshot%s restore -C %s %s\n", hostArg(host), transport.QuoteIfNeeded(s.Dir), res.Undo.ID)
}

// WritePruned writes each pruned snapshot and their count; olderThan is
// the age as the user gave it.
func WritePruned(w io.Writer, pruned []gitsnap.Snapshot, olderThan string) {
	for _, s := range pruned {
		fmt.Fprintf(w, "pruned %s (%s)\n", s.ID, s.Time.Local().Format(time.DateTime))
	}
	fmt.Fprintf(w, "%d snapshots older than %s pruned\n", len(pruned), olderThan)
}
