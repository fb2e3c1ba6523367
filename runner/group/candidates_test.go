package group

import (
	"testing"

	"github.com/runner-cli/runner/runner/plan"
	"github.com/runner-cli/runner/state"
)

// TestCandidatesFor: each candidate's request is the dispatch's with its
// own agent and that agent's model, detached, in a worktree from the
// group's snapshot, told of no overlap and (unless --awareness was
// given) of no other task; on a host, the group's folder there.
func TestCandidatesFor(t *testing.T) {
	models := func(agent, m string) string {
		if m == "fast" {
			return agent + "-fast-1"
		}
		return m
	}
	base := plan.Request{Project: "web", Text: "fix it", Agent: "claude", Model: "ignored", Host: "any"}
	base.Settings.Awareness = "project"
	g := &state.Group{ID: "g_1", Dir: "/repo"}
	for _, tc := range []struct {
		name             string
		c                Candidates
		agent, where     string
		model, awareness string
		host, project    string
	}{
		{"here", Candidates{Req: base, Model: "fast", Models: models}, "codex", "", "codex-fast-1", "off", "any", "web"},
		{"on a host", Candidates{Req: base, Model: "fast", Models: models}, "claude", "h", "claude-fast-1", "off", "h", "/repo"},
		{"awareness asked", Candidates{Req: base, Awareness: "project"}, "claude", "", "", "project", "any", "web"},
		{"a model not an alias", Candidates{Req: base, Model: "opus-4", Models: models}, "claude", "", "opus-4", "off", "any", "web"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.c.For(g, tc.agent, tc.where)
			if r.Agent != tc.agent || r.Model != tc.model || r.Text != "fix it" {
				t.Errorf("agent %q model %q text %q, want %q %q", r.Agent, r.Model, r.Text, tc.agent, tc.model)
			}
			if r.Worktree == nil || !*r.Worktree || r.Group != "g_1" || r.Snapshot != "g_1" {
				t.Errorf("worktree %v group %q snapshot %q: want a worktree from g_1's snapshot", r.Worktree, r.Group, r.Snapshot)
			}
			if !r.Settings.Detached || !r.Settings.NoOverlapMessages || string(r.Settings.Awareness) != tc.awareness {
				t.Errorf("settings %+v: want detached, no overlap messages, awareness %q", r.Settings, tc.awareness)
			}
			if r.Host != tc.host || r.Project != tc.project {
				t.Errorf("host %q project %q, want %q %q", r.Host, r.Project, tc.host, tc.project)
			}
		})
	}
	if base.Worktree != nil || base.Settings.Detached || base.Group != "" {
		t.Errorf("the dispatch's request changed: %+v", base)
	}
}
