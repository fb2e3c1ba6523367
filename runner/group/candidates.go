package group

import (
	"github.com/runner-cli/runner/runner/plan"
	"github.com/runner-cli/runner/state"
)

// Candidates is how a group's candidates are each dispatched: from the
// dispatch's request, each with its own agent and that agent's model, in
// a worktree of its own from the group's snapshot.
type Candidates struct {
	// Req is the dispatch's request (plan.Flags.Request).
	Req plan.Request
	// Model is --model as given; Models resolves it for an agent (an
	// alias of the config: config.Config.ResolveModel; nil: as given).
	Model  string
	Models func(agent, model string) string
	// Awareness is --awareness as given ("": a candidate is told nothing
	// of the others).
	Awareness string
}

// For is the request of g's candidate with agent: detached, in a
// worktree of its own from g's snapshot, on where ("" here; a host, any,
// label:L: the same path there as g's here). Candidates change the same
// files by design: no overlap messages, and no note of the others
// unless --awareness asks for it.
func (c Candidates) For(g *state.Group, agent, where string) plan.Request {
	r := c.Req
	r.Agent, r.Model = agent, c.Model
	if c.Models != nil {
		r.Model = c.Models(agent, c.Model)
	}
	r.Worktree, r.Group, r.Snapshot = new(true), g.ID, g.ID
	r.Settings.Detached = true
	if where != "" {
		r.Host, r.Project = where, g.Dir
	}
	r.Settings.NoOverlapMessages = true
	if c.Awareness == "" {
		r.Settings.Awareness = "off"
	}
	return r
}
