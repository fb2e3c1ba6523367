// Package overlap is the rule that tells agents when another task changes
// their files: a task's changed files recorded (Record), its overlaps with
// the other tasks of its repository brought up to date on both sides, and
// the messages that tell each agent once per new file (Tell, Text). It
// knows the state and nothing else; runner/changes looks at the files
// (gitsnap.Changed) and posts the messages.
package overlap

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/runner-cli/runner/state"
)

// Tell is a message an overlap asks for: task To is told that task Other
// changed Files too (New of them not told before).
type Tell struct {
	To, Other string
	Files     []string // every file the two share
	New       []string // those To was not told about yet
}

// Options tune Record.
type Options struct {
	Now time.Time
	// Quiet reports whether a task opted out of overlap messages (dispatch
	// --no-overlap-messages, config overlap_messages = false): its
	// overlaps are recorded, never told. Nil: nobody did.
	Quiet func(*state.Task) bool
}

// Counts reports whether t's changes can meet another task's: it has
// changes recorded, and is active or orphaned, or finished with a branch
// of its own not merged yet. A finished task in a shared tree left its
// changes in that tree: nothing is left to meet.
func Counts(t *state.Task) bool {
	if t == nil || t.Changes == nil || !t.Changes.Merged.IsZero() {
		return false
	}
	if t.Status.IsActive() || t.Status == state.StatusOrphaned {
		return true
	}
	return t.Branch != ""
}

// sameTree reports whether a and b work in one shared tree: their changes
// cannot be told apart, so they never overlap each other.
func sameTree(a, b *state.Changes, ta, tb *state.Task) bool {
	return a.Shared && b.Shared && ta.Dir != "" && tb.Dir != "" && sameRepo(a, b) && ta.Branch == "" && tb.Branch == ""
}

func sameRepo(a, b *state.Changes) bool { return a.Repo == b.Repo && a.Host == b.Host }

// Record sets task id's changes to ch (keeping when it was merged) and
// brings the overlaps between it and every other task of its repository up
// to date on both sides: an overlap is added, its files changed, or it is
// removed when the files no longer meet or the other task no longer counts.
// It returns the messages to send: for each side of an overlap whose files
// grew past what that side was told, and which is active and not quiet.
// The files told are recorded at once (Told), so a message is asked for
// once per new file, whatever happens to it after.
func Record(st *state.State, id string, ch state.Changes, opts Options) []Tell {
	t := st.Task(id)
	if t == nil {
		return nil
	}
	if t.Changes != nil {
		ch.Merged = t.Changes.Merged
	}
	t.Changes = &ch
	var tells []Tell
	seen := map[string]bool{}
	for _, o := range sortedTasks(st) {
		if o.ID == id {
			continue
		}
		seen[o.ID] = true
		var files []string
		if Counts(t) && Counts(o) && sameRepo(t.Changes, o.Changes) && !sameTree(t.Changes, o.Changes, t, o) {
			files = intersect(t.Changes.Files, o.Changes.Files)
		}
		tells = appendTell(tells, set(t, o.ID, files, opts), t, o.ID, opts)
		tells = appendTell(tells, set(o, t.ID, files, opts), o, t.ID, opts)
	}
	// Overlaps with tasks gone from the index (archived, pruned) go too.
	t.Overlaps = slices.DeleteFunc(t.Overlaps, func(ov state.Overlap) bool { return !seen[ov.Task] })
	return tells
}

// Forget removes every overlap with task id, on every task: its branch was
// merged at merged (its changes are marked merged), or, merged zero, its
// branch is gone (its changes are dropped).
func Forget(st *state.State, id string, merged time.Time) {
	if t := st.Task(id); t != nil {
		t.Overlaps = nil
		switch {
		case merged.IsZero():
			t.Changes = nil
		case t.Changes != nil:
			t.Changes.Merged = merged
		}
	}
	for _, o := range st.Tasks {
		o.Overlaps = slices.DeleteFunc(o.Overlaps, func(ov state.Overlap) bool { return ov.Task == id })
	}
}

// set makes t's overlap with other hold files (none: no overlap) and
// returns the files t is to be told about now.
func set(t *state.Task, other string, files []string, opts Options) []string {
	ov := t.OverlapWith(other)
	if len(files) == 0 {
		if ov != nil {
			t.Overlaps = slices.DeleteFunc(t.Overlaps, func(x state.Overlap) bool { return x.Task == other })
		}
		return nil
	}
	if ov == nil {
		t.Overlaps = append(t.Overlaps, state.Overlap{Task: other, Since: opts.Now})
		ov = &t.Overlaps[len(t.Overlaps)-1]
	}
	ov.Files = files
	// A done task's agent is idle at its prompt: a message wakes it.
	if !(t.Status.IsActive() || t.Status == state.StatusDone) || (opts.Quiet != nil && opts.Quiet(t)) {
		return nil
	}
	var fresh []string
	for _, f := range files {
		if !slices.Contains(ov.Told, f) {
			fresh = append(fresh, f)
		}
	}
	if len(fresh) > 0 {
		ov.Told = union(ov.Told, fresh)
	}
	return fresh
}

func appendTell(tells []Tell, fresh []string, to *state.Task, other string, opts Options) []Tell {
	if len(fresh) == 0 {
		return tells
	}
	return append(tells, Tell{To: to.ID, Other: other, Files: slices.Clone(to.OverlapWith(other).Files), New: fresh})
}

// sortedTasks returns the tasks of the index, by id (so that the order of
// the overlaps and of the messages does not depend on a map).
func sortedTasks(st *state.State) []*state.Task {
	out := make([]*state.Task, 0, len(st.Tasks))
	for _, t := range st.Tasks {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// intersect returns the paths in both sorted lists, sorted.
func intersect(a, b []string) []string {
	var out []string
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			out = append(out, a[i])
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return out
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}

// maxNamed caps the files a message or a status line names.
const maxNamed = 8

// Names lists files for a person: at most maxNamed, then "and N more",
// each as ShownName shows it.
func Names(files []string) string {
	shown := make([]string, 0, min(len(files), maxNamed))
	for _, f := range files[:min(len(files), maxNamed)] {
		shown = append(shown, ShownName(f))
	}
	if len(files) <= maxNamed {
		return strings.Join(shown, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(shown, ", "), len(files)-maxNamed)
}

// ShownName is a file name as a message shows it: as it is when it is
// plain, else quoted with Go's escapes (a name is the agent's to choose:
// one with a newline, a control byte, a comma or quotes must not read as
// more than a name).
func ShownName(f string) string {
	for _, r := range f {
		if r < 0x20 || r == 0x7f || r == '"' || r == ',' || r == '\'' || r == 0x85 || r == 0x2028 || r == 0x2029 || !unicode.IsPrint(r) && r != ' ' {
			return strconv.Quote(f)
		}
	}
	if strings.TrimSpace(f) != f {
		return strconv.Quote(f)
	}
	return f
}

// Text is the message that tells a task about tl, naming the other task
// (o, when still in the state), the files, and how to reach it.
func Text(tl Tell, o *state.Task) string {
	var b strings.Builder
	who := "Task " + tl.Other
	if o != nil {
		who = fmt.Sprintf("Task %s (%s, %s, %s", tl.Other, o.Agent, o.Status, describeTree(o))
		if o.Project != "" {
			who += ", project " + o.Project
		}
		who += ")"
	}
	fmt.Fprintf(&b, "%s has changed files you changed too: %s.", who, Names(tl.New))
	if len(tl.Files) > len(tl.New) {
		fmt.Fprintf(&b, " (Shared with it so far: %d files: %s.)", len(tl.Files), Names(tl.Files))
	}
	fmt.Fprintf(&b, "\nYour changes may conflict when both are merged. If it matters, agree on who changes what: 'runner msg %s TEXT' reaches it; 'runner status %s' shows what it does.", tl.Other, tl.Other)
	return b.String()
}

func describeTree(t *state.Task) string {
	if t.Branch != "" {
		return "branch " + t.Branch
	}
	return "in the shared tree " + t.Dir
}
