// Lineage: the tree of tasks that dispatched tasks, and what a parent
// collects of its children.

package messaging

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/state"
)

// TreeNode is a task with its children, for `runner tree`.
type TreeNode struct {
	ID       string       `json:"id"`
	Project  string       `json:"project,omitempty"`
	Agent    string       `json:"agent"`
	Status   state.Status `json:"status"`
	Level    int          `json:"level"`
	Task     string       `json:"task"`
	Children []*TreeNode  `json:"children,omitempty"`
}

// BuildTree returns the task hierarchy of st, archived tasks included: the
// subtree of root (an id or prefix), or every root task (tasks without a
// parent, or whose parent is gone), children oldest first.
func BuildTree(st *state.State, root string) ([]*TreeNode, error) {
	all, err := st.AllTasks()
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*state.Task, len(all))
	kids := map[string][]*state.Task{}
	for _, t := range all {
		byID[t.ID] = t
		kids[t.Parent] = append(kids[t.Parent], t)
	}
	for _, list := range kids {
		sort.Slice(list, func(i, j int) bool { return list[i].Created.Before(list[j].Created) })
	}
	var build func(t *state.Task, depth int) *TreeNode
	build = func(t *state.Task, depth int) *TreeNode {
		n := &TreeNode{ID: t.ID, Project: t.Project, Agent: t.Agent, Status: t.Status, Level: t.Level, Task: textutil.Headline(t.Text, 60)}
		if depth < 32 { // a corrupt cycle cannot recurse forever
			for _, c := range kids[t.ID] {
				n.Children = append(n.Children, build(c, depth+1))
			}
		}
		return n
	}
	if root != "" {
		t, err := st.FindTask(root)
		if err != nil {
			return nil, fault.Usagef("%v (see 'runner ps --all')", err)
		}
		return []*TreeNode{build(t, 0)}, nil
	}
	var roots []*TreeNode
	var tops []*state.Task
	for _, t := range all {
		if _, ok := byID[t.Parent]; t.Parent == "" || !ok {
			tops = append(tops, t)
		}
	}
	sort.Slice(tops, func(i, j int) bool { return tops[i].Created.Before(tops[j].Created) })
	for _, t := range tops {
		roots = append(roots, build(t, 0))
	}
	return roots, nil
}

// PrintTree writes the hierarchy with box-drawing branches.
func PrintTree(w io.Writer, nodes []*TreeNode) {
	var walk func(n *TreeNode, prefix string, last, top bool)
	walk = func(n *TreeNode, prefix string, last, top bool) {
		branch, next := "", ""
		if !top {
			branch, next = "├─ ", "│  "
			if last {
				branch, next = "└─ ", "   "
			}
		}
		fmt.Fprintf(w, "%s%s%s  %s  %s  L%d  %s\n", prefix, branch, n.ID, n.Agent, n.Status, n.Level, n.Task)
		for i, c := range n.Children {
			walk(c, prefix+next, i == len(n.Children)-1, false)
		}
	}
	for _, n := range nodes {
		walk(n, "", true, true)
	}
}

// ChildOutcome is one child's outcome, for `runner collect`.
type ChildOutcome struct {
	ID       string       `json:"id"`
	Agent    string       `json:"agent"`
	Status   state.Status `json:"status"`
	Finished bool         `json:"finished"`
	ExitCode int          `json:"exit_code"`
	Task     string       `json:"task"`
	Summary  string       `json:"summary,omitempty"`
	// Answer is the child's final message of its latest turn, whole.
	Answer     string    `json:"answer,omitempty"`
	ResultTail string    `json:"result_tail,omitempty"`
	Ended      time.Time `json:"ended,omitzero"`
}

// Collection is what `runner collect PARENT` reports.
type Collection struct {
	Parent      string         `json:"parent"`
	Children    []ChildOutcome `json:"children"`
	AllFinished bool           `json:"all_finished"`
}

// CollectChildren gathers the outcomes of the children of task parent (an
// id or prefix), oldest first, with whether all of them finished; exitOf
// gives each child's exit code (cmd/runner's table).
func CollectChildren(st *state.State, parent string, exitOf func(*state.Task) int) (*Collection, error) {
	p, err := st.FindTask(parent)
	if err != nil {
		return nil, fault.Usagef("%v (see 'runner ps --all')", err)
	}
	c := &Collection{Parent: p.ID, AllFinished: true, Children: []ChildOutcome{}}
	all, err := st.AllTasks()
	if err != nil {
		return nil, err
	}
	var kids []*state.Task
	for _, t := range all {
		if t.Parent == p.ID {
			if t.Archived {
				t = st.Task(t.ID) // the whole record: its answer and result
			}
			kids = append(kids, t)
		}
	}
	sort.Slice(kids, func(i, j int) bool { return kids[i].Created.Before(kids[j].Created) })
	for _, t := range kids {
		fin := t.Status.IsTerminal()
		c.AllFinished = c.AllFinished && fin
		c.Children = append(c.Children, ChildOutcome{ID: t.ID, Agent: t.Agent, Status: t.Status, Finished: fin,
			ExitCode: exitOf(t), Task: textutil.Headline(t.Text, 100), Summary: t.LastTurn(), Answer: t.Answer, ResultTail: t.ResultTail, Ended: t.Ended})
	}
	return c, nil
}

// PrintCollection writes a collection as text.
func PrintCollection(w io.Writer, c *Collection) {
	how := "some still running"
	if c.AllFinished {
		how = "all finished"
	}
	fmt.Fprintf(w, "%s: %d children, %s\n", c.Parent, len(c.Children), how)
	for _, k := range c.Children {
		fmt.Fprintf(w, "%s  %s  %s  %s\n", k.ID, k.Agent, k.Status, k.Task)
		if k.Answer != "" {
			// The whole answer, indented: what the parent came for.
			for _, l := range strings.Split(strings.TrimRight(k.Answer, "\n"), "\n") {
				fmt.Fprintf(w, "    %s\n", l)
			}
		} else if k.Summary != "" {
			fmt.Fprintf(w, "    %s\n", k.Summary)
		}
		if k.ResultTail != "" && k.Status != state.StatusDone {
			for _, l := range strings.Split(textutil.LastLines(k.ResultTail, 5), "\n") {
				fmt.Fprintf(w, "    | %s\n", l)
			}
		}
	}
}
