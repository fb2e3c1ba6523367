package messaging

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/fault"

	"github.com/runner-cli/runner/state"
)

// AwarenessMode chooses which other tasks a task's prompt is told about.
type AwarenessMode string

// The awareness modes.
const (
	AwarenessAll     AwarenessMode = "all"     // every active task, same project first
	AwarenessProject AwarenessMode = "project" // active tasks of the same project only
	AwarenessOff     AwarenessMode = "off"     // nothing
)

// DefaultAwarenessMax is the default cap, in characters, of an awareness
// block.
const DefaultAwarenessMax = 1500

// awarenessLineMax caps the task line and the turn summary of each entry,
// in characters.
const awarenessLineMax = 100

// ParseAwarenessMode parses "all", "project" or "off"; anything else is a
// usage error.
func ParseAwarenessMode(s string) (AwarenessMode, error) {
	switch m := AwarenessMode(s); m {
	case AwarenessAll, AwarenessProject, AwarenessOff:
		return m, nil
	}
	return "", fault.Usagef("invalid awareness mode %q (use all, project or off)", s)
}

// AwarenessOptions tune RenderAwareness.
type AwarenessOptions struct {
	Mode     AwarenessMode // "" means AwarenessAll
	MaxChars int           // 0 means DefaultAwarenessMax
	Now      time.Time     // for running times; zero means clock.Now()
}

// RenderAwareness renders, for task self, a compact block about the other
// tasks in st: for a child task first its parent and its siblings (in any
// status), then the other active tasks (statuses for which IsActive is
// true): the same project first, then the others, most recently started
// first within each group.
// Each entry gives the id, project, agent, status, running time, the first
// line of the task and the latest turn summary. The block is at most
// MaxChars characters; tasks that do not fit are counted in a final
// "+N more" line. It is empty when there is nothing to tell or the mode is
// off. Control characters in task text are replaced, since the block goes
// into an agent's prompt. st may come from an index-only update: the
// tasks it shows are read whole.
func RenderAwareness(st *state.State, self *state.Task, opts AwarenessOptions) string {
	mode := opts.Mode
	if mode == "" {
		mode = AwarenessAll
	}
	if mode == AwarenessOff {
		return ""
	}
	maxChars := opts.MaxChars
	if maxChars <= 0 {
		maxChars = DefaultAwarenessMax
	}
	now := opts.Now
	if now.IsZero() {
		now = clock.Now()
	}
	family := awarenessFamily(st, self)
	others := awarenessOthers(st, self, mode, family)
	tasks := append(slices.Clone(family), others...)
	if len(tasks) == 0 {
		return ""
	}
	var othersHeader string
	if mode == AwarenessProject {
		othersHeader = fmt.Sprintf("Other active runner tasks in project %s (%d):\n", awareProject(self), len(others))
	} else {
		othersHeader = fmt.Sprintf("Other active runner tasks (%d), this project first:\n", len(others))
	}
	var b strings.Builder
	if len(family) > 0 {
		fmt.Fprintf(&b, "Your parent task and its other children (message them: runner msg @parent|@siblings TEXT):\n")
	} else {
		b.WriteString(othersHeader)
	}
	used := utf8.RuneCountInString(b.String())
	// Room is kept for the longest "+N more" line we could need.
	reserve := utf8.RuneCountInString(moreLine(len(tasks)))
	if used+reserve > maxChars {
		return ""
	}
	shown := 0
	for i, t := range tasks {
		e := awarenessEntry(whole(st, t), now)
		switch {
		case i < len(family) && t.ID == self.Parent:
			e = "- parent " + strings.TrimPrefix(e, "- ")
		case i < len(family):
			e = "- sibling " + strings.TrimPrefix(e, "- ")
		case i == len(family) && len(family) > 0:
			e = othersHeader + e
		}
		n := utf8.RuneCountInString(e)
		last := shown == len(tasks)-1
		if used+n > maxChars || (!last && used+n+reserve > maxChars) {
			break
		}
		b.WriteString(e)
		used += n
		shown++
	}
	if rest := len(tasks) - shown; rest > 0 {
		b.WriteString(moreLine(rest))
	}
	return b.String()
}

// whole is t with its record read, on a state an index-only update
// loaded (state.Store.UpdateIndex): only the tasks the block shows are
// read, so its cost does not grow with the tasks the index carries.
func whole(st *state.State, t *state.Task) *state.Task {
	if x := st.Task(t.ID); x != nil {
		return x
	}
	return t
}

func moreLine(n int) string { return fmt.Sprintf("+%d more\n", n) }

// awarenessFamily lists the tasks a child task hears about first, in any
// status: its parent, then its siblings, oldest first.
func awarenessFamily(st *state.State, self *state.Task) []*state.Task {
	if self.Parent == "" {
		return nil
	}
	var family []*state.Task
	if p := st.Task(self.Parent); p != nil {
		family = append(family, p)
	}
	var sibs []*state.Task
	for _, t := range st.Tasks {
		if t.ID != self.ID && t.Parent == self.Parent {
			sibs = append(sibs, t)
		}
	}
	sort.Slice(sibs, func(i, j int) bool {
		if !sibs[i].Created.Equal(sibs[j].Created) {
			return sibs[i].Created.Before(sibs[j].Created)
		}
		return sibs[i].ID < sibs[j].ID
	})
	return append(family, sibs...)
}

// awarenessOthers lists the other active tasks, this project's first, each
// group most recent first (other projects' only in mode all).
func awarenessOthers(st *state.State, self *state.Task, mode AwarenessMode, family []*state.Task) []*state.Task {
	inFamily := map[string]bool{}
	for _, t := range family {
		inFamily[t.ID] = true
	}
	var same, other []*state.Task
	for id, t := range st.Tasks {
		if t.ID == self.ID || !t.Status.IsActive() || inFamily[t.ID] {
			continue
		}
		if t.Project == "" {
			t = st.Task(id) // its directory tells its project
		}
		switch {
		case sameProject(t, self):
			same = append(same, t)
		case mode == AwarenessAll:
			other = append(other, t)
		}
	}
	sortRecentFirst(same)
	sortRecentFirst(other)
	return append(same, other...)
}

func awarenessEntry(t *state.Task, now time.Time) string {
	start := t.Started
	if start.IsZero() {
		start = t.Created
	}
	e := fmt.Sprintf("- %s %s %s %s %s: %s\n", t.ID, awareProject(t), cell(t.Agent), t.Status,
		shortDuration(now.Sub(start)), OneLine(textutil.FirstLine(t.Text), awarenessLineMax))
	if t.Branch != "" {
		e += "  works on branch " + t.Branch + " (its own worktree)\n"
	}
	if turn := t.LastTurn(); turn != "" {
		e += "  latest: " + OneLine(turn, awarenessLineMax) + "\n"
	}
	if c := t.Changes; c != nil && c.Count > 0 {
		e += "  " + changedLine(c) + "\n"
	}
	return e
}

// awarenessFiles caps the files an awareness entry names.
const awarenessFiles = 5

// changedLine names the files a task changed so far: at most
// awarenessFiles of them, and the count.
func changedLine(c *state.Changes) string {
	var names []string
	for _, f := range c.Files[:min(len(c.Files), awarenessFiles)] {
		names = append(names, shownName(f))
	}
	list := OneLine(strings.Join(names, ", "), awarenessLineMax)
	if more := c.Count - len(names); more > 0 {
		list += fmt.Sprintf(" (+%d more)", more)
	}
	if c.Shared {
		return fmt.Sprintf("its shared tree has %d changed file(s), its own or not: %s", c.Count, list)
	}
	return fmt.Sprintf("changed %d file(s): %s", c.Count, list)
}

func sortRecentFirst(ts []*state.Task) {
	sort.Slice(ts, func(i, j int) bool {
		a, b := startOf(ts[i]), startOf(ts[j])
		if !a.Equal(b) {
			return a.After(b)
		}
		return ts[i].ID < ts[j].ID
	})
}

func startOf(t *state.Task) time.Time {
	if !t.Started.IsZero() {
		return t.Started
	}
	return t.Created
}

// awareProject names a task's project in the block: its name, or its
// directory with the end kept when it is long (the end tells directories
// apart).
func awareProject(t *state.Task) string {
	if t.Project != "" || t.Dir == "" {
		return cell(t.Project)
	}
	d := OneLine(t.Dir, len(t.Dir)+1)
	if r := []rune(d); len(r) > 40 {
		d = "…" + string(r[len(r)-39:])
	}
	return d
}

// cell is s as one clean awareness cell of at most 40 characters, "-"
// when empty.
func cell(s string) string { return textutil.OrDash(OneLine(s, 40)) }

// clip makes s one clean line of at most n characters, ending in "…" when
// cut.
// OneLine makes s one line of at most n runes for a prompt or a table:
// escape sequences stripped, control characters as spaces, runs of white
// space as one space, clipped with "…".
func OneLine(s string, n int) string {
	s = textutil.StripEscapes(s)
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	return textutil.ClipRunes(s, n)
}

// shortDuration renders d compactly: 45s, 12m, 3h05m, 2d04h.
func shortDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
}

// sameProject reports whether two tasks are in the same project: the same
// registered name when both have one, else the same directory.
func sameProject(a, b *state.Task) bool {
	if a.Project != "" && b.Project != "" {
		return a.Project == b.Project
	}
	return a.Dir != "" && a.Dir == b.Dir
}

// shownName is a file name as an agent is shown it: quoted with Go's
// escapes when it holds anything but plain printable text (see
// overlap.ShownName, which this package cannot import).
func shownName(f string) string {
	if strings.TrimSpace(f) != f || strings.ContainsAny(f, "\",'") || strings.IndexFunc(f, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) >= 0 {
		return strconv.Quote(f)
	}
	return f
}
