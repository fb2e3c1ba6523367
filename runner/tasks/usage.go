package tasks

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/state"
)

// Groupings of a usage report.
const (
	ByProject = "project"
	ByAgent   = "agent"
	ByDay     = "day"
	ByTask    = "task"
	ByTree    = "tree"
	ByHost    = "host" // the host a task ran on ("local": this machine)
)

// UsageGroupings lists the groupings a report knows.
var UsageGroupings = []string{ByProject, ByAgent, ByDay, ByTask, ByTree, ByHost}

// UsageOptions selects the tasks of a usage report and how to group them.
type UsageOptions struct {
	// Since: only tasks active since then (not ended before it); zero
	// for all the state keeps.
	Since time.Time
	// By is one of UsageGroupings.
	By string
	// Project: only this project's tasks (a name or a directory).
	Project string
	// Host: only the tasks on this host (state.HostLocal: this
	// machine's).
	Host string
	// Loc is the time zone days are cut in (nil: local time).
	Loc *time.Location
}

// UsageRow is one group of a usage report.
type UsageRow struct {
	// Key is the project, agent, day (2006-01-02), task id, or the id of
	// the tree's root task (a task dispatched from outside any task).
	Key string `json:"key"`
	// Text is the task's (or the root's) first line (ByTask, ByTree).
	Text  string      `json:"text,omitempty"`
	Tasks int         `json:"tasks"`
	Spend state.Spend `json:"spend"`
}

// UsageReport is what runner usage prints.
type UsageReport struct {
	Since time.Time   `json:"since,omitzero"`
	By    string      `json:"by"`
	Rows  []UsageRow  `json:"rows"`
	Total state.Spend `json:"total"`
	Tasks int         `json:"tasks"`
}

// Usage sums what tasks spent, as their agents' CLIs recorded it (tasks
// whose CLI recorded nothing count as unknown turns, never as 0), grouped
// as opts says. A task counts whole in the window it was active in.
func Usage(ctx context.Context, d Deps, opts UsageOptions) (*UsageReport, error) {
	if opts.By == "" {
		opts.By = ByProject
	}
	if !slices.Contains(UsageGroupings, opts.By) {
		return nil, fault.Usagef("--by %q: group by one of %s", opts.By, strings.Join(UsageGroupings, ", "))
	}
	loc := opts.Loc
	if loc == nil {
		loc = time.Local
	}
	st, err := d.Store.Read(ctx)
	if err != nil {
		return nil, err
	}
	ref, err := selectProject(st, opts.Project)
	if err != nil {
		return nil, err
	}
	all, err := st.AllTasks()
	if err != nil {
		return nil, fmt.Errorf("usage: %w", err)
	}
	key := usageKey(opts.By, loc, all)
	rep := &UsageReport{Since: opts.Since, By: opts.By, Rows: []UsageRow{}}
	rows := map[string]*UsageRow{}
	for _, t := range all {
		if opts.Project != "" && !ref.Has(t) || !state.OnHost(opts.Host, t.Tmux.Host, t.Tmux.Pool) {
			continue
		}
		if !opts.Since.IsZero() && !t.Ended.IsZero() && t.Ended.Before(opts.Since) {
			continue
		}
		k, text := key(t)
		r := rows[k]
		if r == nil {
			r = &UsageRow{Key: k, Text: text}
			rows[k] = r
		}
		r.Tasks++
		r.Spend = r.Spend.Add(t.Spend)
		rep.Total = rep.Total.Add(t.Spend)
		rep.Tasks++
	}
	for _, r := range rows {
		rep.Rows = append(rep.Rows, *r)
	}
	sortUsageRows(rep.Rows, opts.By)
	return rep, nil
}

// usageKey returns what groups a task in a report grouped by: the key of
// its row, and the text the row shows (ByTask, ByTree). Days are cut in
// loc; a tree is found among all.
func usageKey(by string, loc *time.Location, all []*state.Task) func(t *state.Task) (key, text string) {
	switch by {
	case ByAgent:
		return func(t *state.Task) (string, string) { return t.Agent, "" }
	case ByHost:
		return func(t *state.Task) (string, string) { return cmp.Or(t.Tmux.Host, state.HostLocal), "" }
	case ByDay:
		return func(t *state.Task) (string, string) { return t.Created.In(loc).Format(time.DateOnly), "" }
	case ByTask:
		return func(t *state.Task) (string, string) { return t.ID, t.Text }
	case ByTree:
		byID := make(map[string]*state.Task, len(all))
		for _, t := range all {
			byID[t.ID] = t
		}
		return func(t *state.Task) (string, string) {
			root := treeRoot(t, byID, len(all))
			return root.ID, root.Text
		}
	}
	return func(t *state.Task) (string, string) { return projectKey(t), "" }
}

// projectKey is a task's project, or its directory's name when it has
// none ("-" when neither says anything).
func projectKey(t *state.Task) string {
	key := t.Project
	if key == "" {
		key = filepath.Base(t.Dir)
	}
	if key == "" || key == "." {
		key = "-"
	}
	return key
}

// treeRoot is the task at the root of t's tree: its furthest ancestor
// still recorded, found in at most maxHops steps (so a cycle in the
// records ends).
func treeRoot(t *state.Task, byID map[string]*state.Task, maxHops int) *state.Task {
	root := t
	for hops := 0; root.Parent != "" && byID[root.Parent] != nil && hops < maxHops; hops++ {
		root = byID[root.Parent]
	}
	return root
}

// sortUsageRows orders a report's rows: days in order; any other group
// by the most tokens first, then by key.
func sortUsageRows(rows []UsageRow, by string) {
	slices.SortFunc(rows, func(a, b UsageRow) int {
		if by == ByDay {
			return strings.Compare(a.Key, b.Key)
		}
		if c := b.Spend.Tokens() - a.Spend.Tokens(); c != 0 {
			if c > 0 {
				return 1
			}
			return -1
		}
		return strings.Compare(a.Key, b.Key)
	})
}
