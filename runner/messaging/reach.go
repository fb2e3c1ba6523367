package messaging

import (
	"fmt"

	"github.com/runner-cli/runner/state"
)

// Reach is whom a sandboxed task's messages and questions (runner msg,
// runner ask through its door) may reach: ReachTree, its own tree of
// tasks (the default: an unrelated agent, perhaps unsandboxed, never
// gets a prompt a confined one wrote), or ReachAll, any task (config
// sandbox_reach).
const (
	ReachTree = "tree"
	ReachAll  = "all"
)

// SplitTree splits targets into those of sender's tree of tasks (its
// lineage's root's) and the others.
func SplitTree(st *state.State, sender string, targets []string) (in, out []string) {
	root := st.Root(sender)
	for _, id := range targets {
		if st.Root(id) == root {
			in = append(in, id)
		} else {
			out = append(out, id)
		}
	}
	return in, out
}

// OutsideTree is why a sandboxed sender's message or question does not
// reach task id.
func OutsideTree(sender, id string) string {
	return fmt.Sprintf("task %s is not in the tree of sandboxed task %s: a sandboxed agent reaches only its own tree of tasks (config sandbox_reach \"all\" lets it reach any)", id, sender)
}
