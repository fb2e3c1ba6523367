// Package enqueue records a planned dispatch (package plan) as a new
// task, queued: its text kept (a long one in a file of its own), its id
// drawn, the breadth of its tree checked, its ports allocated, its
// record and the journal's line written. It writes through the state
// store and the task record (package record) it is given, and takes no
// Env.
package enqueue

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/breadth"
	"github.com/runner-cli/runner/runner/plan"
	"github.com/runner-cli/runner/runner/ports"
	"github.com/runner-cli/runner/runner/projects"
	"github.com/runner-cli/runner/runner/reconcile"
	"github.com/runner-cli/runner/runner/record"
	"github.com/runner-cli/runner/state"
)

// Where is where a task is recorded, and by whom.
type Where struct {
	Store  *state.Store
	Book   record.Book      // the task record's writes and the journal
	Now    func() time.Time // the clock: the task's creation
	Socket string           // the tmux socket of the task's site
}

// Task records p's task, queued (waiting for p.After, when it has some),
// owned by this process until a supervisor takes it over (a reconcile
// that finds this process gone fails the task, or, waiting for others,
// orphans it).
// A long text goes to its own file, named after the task, before the
// record points at it (and is removed when the record is not written).
func Task(ctx context.Context, p *plan.Plan, w Where) (*state.Task, error) {
	tmux := state.TmuxTarget{Socket: w.Socket, Session: projects.SessionName(p.Project, p.Dir), Host: p.Host, Pool: p.Pool}
	set, _ := json.Marshal(p.Settings)
	now, owner, ident := w.Now(), os.Getpid(), reconcile.SelfIdentity()
	newID := state.RandomTaskID()
	text, textFile, err := w.Store.RecordText(newID, p.Req.Text)
	if err != nil {
		return nil, err
	}
	reason := "dispatched by " + p.Source
	if len(p.After) > 0 {
		reason = reconcile.WaitingReason(p.After)
	}
	build := func(id string) *state.Task {
		tmux.Window = id
		t := &state.Task{ID: id, Project: p.Project, Dir: p.Dir, Agent: p.Profile.Name, Text: text, TextFile: textFile,
			Parent: p.Parent, Level: p.Level, Source: p.Source, Created: now, Settings: set, After: p.After,
			Tmux: tmux, Group: p.Req.Group, Transcript: w.Store.TaskFile(state.FileLog, id),
			SupervisorPID: owner, SupervisorStart: ident}
		_ = t.SetStatus(state.StatusQueued, now, reason)
		return t
	}
	task := build(newID)
	// What admits it, as data: whichever process holds the lock records
	// it, with the other new tasks of a burst, in one write.
	base, count := ports.Range(p.Policy.Ports)
	admit := state.Admission{Parent: p.Parent, MaxTree: p.Req.Tree.MaxTasks, PerMinute: p.Req.Tree.PerMinute, Now: now,
		PortBase: base, PortCount: count, Probe: ports.Probed(task)}
	// The index, not every task's record: breadth, ports and lineage read
	// hot fields only, so the write does not grow with the active tasks.
	err = w.Book.CreateTaskDurably(ctx, "dispatch: record the task", task, admit, func(s *state.State) error {
		id := newID
		if s.Task(id) != nil {
			if textFile != "" {
				return fmt.Errorf("task id %s is taken (a one in 10^12 chance): dispatch again", id)
			}
			id = s.NewTaskID()
		}
		if err := breadth.Check(s, p.Parent, p.Req.Tree, now); err != nil {
			return err
		}
		t := build(id)
		if err := ports.Allocate(s, t, p.Policy.Ports); err != nil {
			return err
		}
		s.Tasks[id] = t
		task = t
		return nil
	})
	if err != nil {
		if textFile != "" {
			os.Remove(textFile)
		}
		return nil, err
	}
	w.Book.Journal(ctx, task, "dispatch", fmt.Sprintf("agent %s in %s: %s", p.Profile.Name, p.Dir, textutil.Headline(p.Req.Text, 100)))
	return task, nil
}
