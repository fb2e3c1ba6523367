package watch

import (
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/projects"
	"github.com/runner-cli/runner/state"
)

// DefaultRecent is how long finished tasks stay in the list (greyed)
// unless --all.
const DefaultRecent = 3 * time.Hour

// Filter says which tasks the list shows.
type Filter struct {
	// Project keeps only tasks of this project (projects.Select
	// resolves a name or a directory); the zero value keeps all.
	Project projects.Ref
	// All shows every retained finished task of the index, not only
	// those of the last Recent.
	All bool
	// Recent is how far back finished tasks are shown; 0 means
	// DefaultRecent.
	Recent time.Duration
	// Text keeps tasks whose id, project, agent, status, task text,
	// summary or question contains it (case-insensitive): the `/` filter.
	Text string
	// Host keeps the tasks on this host (state.HostLocal: this
	// machine's); "" keeps all.
	Host string
	// Expanded names the groups (dispatch --agents) listed candidate by
	// candidate; any other group is one row (the `e` key toggles).
	Expanded map[string]bool
}

// Row is one line of the list: a project header (Task nil) or a task.
type Row struct {
	// Project is the group's name (header rows and task rows alike).
	Project string
	// Dir is the project's directory (header rows).
	Dir string
	// Task is the task of a task row.
	Task *state.Task
	// Depth is how far the task is indented: 0 for a root, 1 for a
	// child shown under its parent, and so on.
	Depth int
	// Queue is the number of messages waiting for the task.
	Queue int
	// Since is when the task entered its status.
	Since time.Time
	// Summary is the latest turn's one-line summary.
	Summary string
	// Group is the group (dispatch --agents) of a group's header row
	// (Task nil, expanded) or of its one row (Task its first candidate,
	// collapsed); Members are its candidates listed.
	Group   string
	Members []*state.Task
}

// Counts is the summary line's data: tasks per status among those listed.
type Counts map[state.Status]int

// Build turns st into the list: project groups (those with active tasks
// first, then by name), each with its tasks as trees (a child under its
// parent when both are listed; roots active first, newest first), and
// the counts per status of the listed tasks.
func Build(st *state.State, now time.Time, f Filter) ([]Row, Counts) {
	recent := f.Recent
	if recent <= 0 {
		recent = DefaultRecent
	}
	var tasks []*state.Task
	for _, t := range st.Tasks {
		if !shown(t, now, recent, f) {
			continue
		}
		tasks = append(tasks, t)
	}
	counts := Counts{}
	byID := map[string]*state.Task{}
	for _, t := range tasks {
		counts[t.Status]++
		byID[t.ID] = t
	}
	queued := map[string]int{}
	for _, msg := range st.Messages {
		if msg.Status == state.MessagePending {
			queued[msg.To]++
		}
	}
	children := map[string][]*state.Task{}
	groups := map[string][]*state.Task{}
	dirs := map[string]string{}
	for _, t := range tasks {
		if t.Parent != "" && byID[t.Parent] != nil {
			children[t.Parent] = append(children[t.Parent], t)
			continue
		}
		g := projectOf(t)
		groups[g] = append(groups[g], t)
		if dirs[g] == "" {
			dirs[g] = t.Dir
			if p, ok := st.Projects[t.Project]; ok && t.Project != "" {
				dirs[g] = p.Dir
			}
		}
	}
	names := make([]string, 0, len(groups))
	for g := range groups {
		names = append(names, g)
	}
	active := func(g string) bool {
		return slices.ContainsFunc(groups[g], func(t *state.Task) bool { return t.Status.IsActive() })
	}
	sort.Slice(names, func(i, j int) bool {
		if a, b := active(names[i]), active(names[j]); a != b {
			return a
		}
		return names[i] < names[j]
	})
	var rows []Row
	for _, g := range names {
		rows = append(rows, Row{Project: g, Dir: dirs[g]})
		rows = projectRows(rows, g, groups[g], children, queued, f.Expanded)
	}
	return rows, counts
}

// projectRows appends project g's tasks to rows: each root with its
// children under it, a group's candidates as one row (or, expanded, under
// a header).
func projectRows(rows []Row, g string, roots []*state.Task, children map[string][]*state.Task, queued map[string]int, expanded map[string]bool) []Row {
	var add func(t *state.Task, depth int)
	add = func(t *state.Task, depth int) {
		rows = append(rows, taskRow(g, t, depth, queued[t.ID]))
		kids := children[t.ID]
		order(kids)
		for _, c := range kids {
			add(c, depth+1)
		}
	}
	order(roots)
	seen := map[string]bool{}
	for _, t := range roots {
		switch {
		case t.Group == "":
			add(t, 0)
		case seen[t.Group]:
		default:
			seen[t.Group] = true
			row := groupRow(g, t.Group, roots, expanded[t.Group])
			rows = append(rows, row)
			if row.Task == nil {
				for _, m := range row.Members {
					add(m, 1)
				}
			}
		}
	}
	return rows
}

// groupRow is the row of group id's candidates among roots: one row for
// all of them (its task the first), or, expanded, a header row (no task)
// that the candidates follow.
func groupRow(project, id string, roots []*state.Task, expanded bool) Row {
	var members []*state.Task
	for _, t := range roots {
		if t.Group == id {
			members = append(members, t)
		}
	}
	if expanded {
		return Row{Project: project, Group: id, Members: members}
	}
	r := taskRow(project, members[0], 0, 0)
	r.Group, r.Members = id, members
	return r
}

// shown reports whether the filter keeps t.
func shown(t *state.Task, now time.Time, recent time.Duration, f Filter) bool {
	if t.Status.IsTerminal() && !f.All {
		end := t.Ended
		if end.IsZero() {
			end = t.Created
		}
		if now.Sub(end) > recent {
			return false
		}
	}
	if f.Project != (projects.Ref{}) && !f.Project.Has(t) || !state.OnHost(f.Host, t.Tmux.Host, t.Tmux.Pool) {
		return false
	}
	if f.Text != "" {
		hay := strings.ToLower(strings.Join([]string{t.ID, t.Project, t.Agent, string(t.Status), t.Text, t.LastTurn(), t.Question, t.Branch, t.Group}, "\x00"))
		if !strings.Contains(hay, strings.ToLower(f.Text)) {
			return false
		}
	}
	return true
}

// projectOf is the group a task is listed under: its project's name, or
// its directory (projects.Label); on a host, "name @host" or
// "host:NAME:/dir".
func projectOf(t *state.Task) string {
	switch {
	case t.Tmux.Host == "":
		return textutil.OrDash(projects.Label(t))
	case t.Project != "":
		return t.Project + " @" + t.Tmux.Host
	}
	return "host:" + t.Tmux.Host + ":" + t.Dir
}

// order sorts tasks active first, then newest first, then by id.
func order(ts []*state.Task) {
	sort.Slice(ts, func(i, j int) bool {
		a, b := ts[i], ts[j]
		if x, y := a.Status.IsActive(), b.Status.IsActive(); x != y {
			return x
		}
		if !a.Created.Equal(b.Created) {
			return a.Created.After(b.Created)
		}
		return a.ID < b.ID
	})
}

func taskRow(g string, t *state.Task, depth, queued int) Row {
	r := Row{Project: g, Task: t, Depth: depth, Summary: t.LastTurn(), Queue: queued}
	r.Since = t.Created
	if n := len(t.History); n > 0 {
		r.Since = t.History[n-1].Time
	}
	return r
}
