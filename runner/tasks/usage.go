package tasks

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/exit"
	"github.com/runner-cli/runner/state"
)

// Groupings of a usage report.
const (
	ByProject = "project"
	ByAgent   = "agent"
	ByDay     = "day"
	ByTask    = "task"
	ByTree    = "tree"
)

// UsageGroupings lists the groupings a report knows.
var UsageGroupings = []string{ByProject, ByAgent, ByDay, ByTask, ByTree}

// UsageOptions selects the tasks of a usage report and how to group them.
type UsageOptions struct {
	// Since: only tasks active since then (not ended before it); zero
	// for all the state keeps.
	Since time.Time
	// By is one of UsageGroupings.
	By string
	// Project: only this project's tasks (a name or a directory).
	Project string
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
func Usage(ctx context.Context, env *runner.Env, opts UsageOptions) (*UsageReport, error) {
	if opts.By == "" {
		opts.By = ByProject
	}
	if !slices.Contains(UsageGroupings, opts.By) {
		return nil, exit.Usagef("--by %q: group by one of %s", opts.By, strings.Join(UsageGroupings, ", "))
	}
	loc := opts.Loc
	if loc == nil {
		loc = time.Local
	}
	st, err := env.Store.Read(ctx)
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
	byID := make(map[string]*state.Task, len(all))
	for _, t := range all {
		byID[t.ID] = t
	}
	rep := &UsageReport{Since: opts.Since, By: opts.By, Rows: []UsageRow{}}
	rows := map[string]*UsageRow{}
	for _, t := range all {
		if opts.Project != "" && !ref.Has(t) {
			continue
		}
		if !opts.Since.IsZero() && !t.Ended.IsZero() && t.Ended.Before(opts.Since) {
			continue
		}
		var key, text string
		switch opts.By {
		case ByProject:
			key = t.Project
			if key == "" {
				key = filepath.Base(t.Dir)
			}
			if key == "" || key == "." {
				key = "-"
			}
		case ByAgent:
			key = t.Agent
		case ByDay:
			key = t.Created.In(loc).Format(time.DateOnly)
		case ByTask:
			key, text = t.ID, t.Text
		case ByTree:
			root := t
			for hops := 0; root.Parent != "" && byID[root.Parent] != nil && hops < len(all); hops++ {
				root = byID[root.Parent]
			}
			key, text = root.ID, root.Text
		}
		r := rows[key]
		if r == nil {
			r = &UsageRow{Key: key, Text: text}
			rows[key] = r
		}
		r.Tasks++
		r.Spend = r.Spend.Add(t.Spend)
		rep.Total = rep.Total.Add(t.Spend)
		rep.Tasks++
	}
	for _, r := range rows {
		rep.Rows = append(rep.Rows, *r)
	}
	slices.SortFunc(rep.Rows, func(a, b UsageRow) int {
		if opts.By == ByDay {
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
	return rep, nil
}
