// Package stateinfo is what `runner state` shows of the state directory:
// its files (Paths), the whole state as JSON (Dump) or as a summary for
// people (WriteSummary), and a repair's report (WriteRepair); and how old
// a finished task must be for `runner prune` (PruneAge).
package stateinfo

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/state"
)

// Paths names the state directory and each of its files and folders.
func Paths(s *state.Store) map[string]string {
	return map[string]string{
		"dir":     s.Dir(),
		"state":   s.Path(),
		"lock":    s.Dir() + "/" + state.LockFile,
		"journal": s.Dir() + "/" + state.JournalFile,
		"records": s.Dir() + "/tasks",
		"archive": s.Dir() + "/archive",
		"ops":     s.Dir() + "/ops",
	}
}

// Dump is the whole state of st as `runner state show --json` prints it:
// the archived tasks as the index shows them ("archived": true; `runner
// status ID` reads one whole).
func Dump(st *state.State) (map[string]any, error) {
	all, err := st.AllTasks()
	if err != nil {
		return nil, err
	}
	msgs, err := st.AllMessages()
	if err != nil {
		return nil, err
	}
	tasks := make(map[string]*state.Task, len(all))
	for _, t := range all {
		tasks[t.ID] = t
	}
	return map[string]any{
		"version": st.Version, "generation": st.Generation, "updated": st.Updated,
		"projects": st.Projects, "tasks": tasks, "messages": msgs,
	}, nil
}

// Reader reads the state (a *state.Store).
type Reader interface {
	Read(ctx context.Context) (*state.State, error)
}

// Summary reads the state and writes it for people: the file at path,
// its projects, its tasks counted by status and listed.
func Summary(ctx context.Context, w io.Writer, r Reader, path string) error {
	st, err := r.Read(ctx)
	if err != nil {
		return err
	}
	all, err := st.AllTasks()
	if err != nil {
		return err
	}
	return WriteSummary(w, path, st, all)
}

// WriteSummary writes st (its file at path) for people: the projects,
// the tasks ts counted by status, then a line per task.
func WriteSummary(w io.Writer, path string, st *state.State, ts []*state.Task) error {
	updated := "never written"
	if !st.Updated.IsZero() {
		updated = "updated " + st.Updated.Local().Format(time.DateTime)
	}
	fmt.Fprintf(w, "%s (version %d, generation %d, %s)\n", path, st.Version, st.Generation, updated)
	ps := st.ProjectList()
	fmt.Fprintf(w, "\nProjects: %d\n", len(ps))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, p := range ps {
		fmt.Fprintf(tw, "  %s\t%s\n", p.Name, p.Dir)
	}
	tw.Flush()
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
	fmt.Fprintf(w, "\nTasks: %d%s, %d archived\n", len(ts), summary, st.ArchivedCount())
	for _, t := range ts {
		text := textutil.FirstLine(t.Text)
		if r := []rune(text); len(r) > 60 {
			text = string(r[:59]) + "…"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", t.ID, textutil.OrDash(t.Project), textutil.OrDash(t.Agent), t.Status,
			t.Created.Local().Format(time.DateTime), text)
	}
	return tw.Flush()
}

// WriteRepair writes what a repair of the state at path (in dir) did.
func WriteRepair(w io.Writer, path, dir string, rep *state.RepairReport) {
	if rep.Healthy {
		fmt.Fprintf(w, "%s is healthy: nothing to repair\n", path)
		return
	}
	from := "an empty state"
	if rep.FromPrevious {
		from = "the previous generation"
	}
	fmt.Fprintf(w, "moved the bad state file to %s\nrebuilt from %s, %d task record(s) and %d journal event(s): %d project(s), %d task(s), %d archived\n",
		rep.MovedTo, from, rep.FromRecords, rep.Replayed, rep.Projects, rep.Tasks, rep.Archived)
	if len(rep.DroppedSegments) > 0 {
		fmt.Fprintf(w, "archive segments that could not be read (their tasks are lost): %s\n", strings.Join(rep.DroppedSegments, ", "))
	}
	if rep.KeptNewer {
		fmt.Fprintf(w, "the newer runner's record files and archive in %s were kept as they are\n", dir)
	}
}

// PruneAge is how long ago a finished task must have ended for prune: the
// age given (given set), else the retention; ok is false when nothing is
// to be pruned (no age given and a retention of 0, which keeps them).
func PruneAge(olderThan time.Duration, given bool, retention time.Duration) (age time.Duration, ok bool) {
	if given {
		return olderThan, true
	}
	return retention, retention > 0
}
