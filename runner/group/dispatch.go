package group

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/runner/plan"
	"github.com/runner-cli/runner/runner/proctree"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/projects"
	"github.com/runner-cli/runner/state"
)

// Flags are dispatch's flags of a group (one task, several agents), as
// given.
type Flags struct {
	Agents       []string // --agents
	Tries        int      // --tries, when TriesSet
	TriesSet     bool
	Check        string
	CheckTimeout time.Duration
	CheckRetry   int
	Vote         bool
	BudgetTokens int64 // --group-budget-tokens
	BudgetUSD    float64
}

// Active reports whether the dispatch makes a group (--agents or --tries).
func (f Flags) Active() bool { return len(f.Agents) > 0 || f.TriesSet }

// Given reports whether a flag that goes with a group was given.
func (f Flags) Given() bool {
	return f.Check != "" || f.Vote || f.CheckRetry != 0 || f.CheckTimeout != 0 || f.BudgetTokens != 0 || f.BudgetUSD != 0
}

// Request is one `runner dispatch` of a group: the request each candidate is
// dispatched from (plan.Request: the project, the text, where, the
// policy), the group's flags, and the dispatch's own that a group reads.
type Request struct {
	Req   plan.Request
	Flags Flags
	// Agent is --agent as given, which --tries repeats.
	Agent    string
	Profiles []*profile.Profile // the known agents
	// Detach starts the group's supervisor in a process of its own.
	Detach bool
	// PrintAnswer is --print-answer, which a group refuses.
	PrintAnswer bool
}

// Starter is what Dispatch uses: a Launcher for the snapshot and the
// candidates, and the state, the clock and the group's supervisor.
type Starter interface {
	Launcher
	// State reads the state (the group's project is resolved in it).
	State(ctx context.Context) (*state.State, error)
	// Now is the clock.
	Now() time.Time
	// StartSupervisor starts `runner group-supervise ID` in a process of
	// its own and returns its pid.
	StartSupervisor(id string) (int, error)
	// UpdateGroup changes group id's record under the state's lock.
	UpdateGroup(ctx context.Context, id string, fn func(*state.Group) error) error
}

// Where is where a group's candidates run for --host h: here ("" or
// local), or on h (a host, any, label:L), never in the config's pool.
func Where(h string) string {
	if h == "local" {
		return ""
	}
	return h
}

// Dispatch starts the group a asks for: its agents and flags checked
// (bad input before anything is written), its record made (its project
// here, its check the flag's or the project's policy's), its snapshot
// taken and its candidates dispatched (Start), and with Detach its
// supervisor started and recorded. It returns the group as started; a
// foreground dispatch then sees it through (SuperviseHere).
func Dispatch(ctx context.Context, s Starter, a Request) (*state.Group, error) {
	if a.Req.Confined != "" {
		// A group's check is a command runner runs, and its worktrees
		// live in the repository's git directory: neither is a sandboxed
		// task's to ask for (as --notify is not).
		return nil, fault.Usagef("--agents/--tries/--check: a sandboxed task cannot start a group")
	}
	agents, err := Agents(a.Flags, a.Agent, a.Profiles)
	if err != nil {
		return nil, err
	}
	if err := Refuse(a); err != nil {
		return nil, err
	}
	g, err := newGroup(ctx, s, a)
	if err != nil {
		return nil, err
	}
	g, err = Start(ctx, s, StartRequest{Group: g, Agents: agents, Where: a.Req.Host})
	switch {
	case errors.Is(err, gitsnap.ErrNotRepo) || errors.Is(err, gitsnap.ErrBareRepo) || errors.Is(err, gitsnap.ErrGitMissing):
		return nil, fault.Usagef("a group needs a git repository here (each candidate works in a worktree of its own): %v", err)
	case err != nil:
		return nil, fmt.Errorf("group: %w", err)
	}
	if a.Detach {
		return g, detach(ctx, s, g)
	}
	return g, nil
}

// detach starts g's supervisor and records it at once, so that a wait
// right after sees it run.
func detach(ctx context.Context, s Starter, g *state.Group) error {
	pid, err := s.StartSupervisor(g.ID)
	if err != nil {
		return fmt.Errorf("group %s: start its supervisor: %w (its candidates run; see them with 'runner compare %s')", g.ID, err, g.ID)
	}
	if err := s.UpdateGroup(ctx, g.ID, func(x *state.Group) error {
		if x.SupervisorPID == 0 && x.Ended.IsZero() {
			x.SupervisorPID, x.SupervisorStart = pid, proctree.Identity(pid)
		}
		return nil
	}); err != nil {
		return err
	}
	s.Say("group %s: supervisor %d started (runner wait %s; runner compare %s)", g.ID, pid, g.ID, g.ID)
	return nil
}

// Agents are the candidates' agents: --agents, or --tries of agent
// (--agent); every name known among profs, else bad input.
func Agents(f Flags, agent string, profs []*profile.Profile) ([]string, error) {
	switch {
	case len(f.Agents) > 0 && f.TriesSet:
		return nil, fault.Usagef("--agents and --tries exclude each other: give the agents, or --tries N of one --agent")
	case f.TriesSet && (f.Tries < 1 || f.Tries > 16):
		return nil, fault.Usagef("--tries %d: give 1 to 16 candidates", f.Tries)
	case f.TriesSet:
		out := make([]string, f.Tries)
		for i := range out {
			out[i] = agent
		}
		return knownAgents(out, profs)
	case len(f.Agents) > 16:
		return nil, fault.Usagef("--agents: %d candidates; at most 16", len(f.Agents))
	}
	var out []string
	for _, a := range f.Agents {
		if a = strings.TrimSpace(a); a == "" {
			return nil, fault.Usagef("--agents %q: an empty agent name", strings.Join(f.Agents, ","))
		}
		out = append(out, a)
	}
	return knownAgents(out, profs)
}

func knownAgents(names []string, profs []*profile.Profile) ([]string, error) {
	for _, n := range names {
		if _, err := profile.FindProfile(profs, n); err != nil {
			return nil, fault.Usagef("--agents: %v", err)
		}
	}
	return names, nil
}

// Refuse says which of the dispatch's flags a group does not take, and
// which of the group's are out of range or given without a group.
func Refuse(a Request) error {
	f, req := a.Flags, a.Req
	switch {
	case len(req.After) > 0 || req.From != "":
		return fault.Usagef("--after/--from: a group starts at once (dispatch the group when its dependencies are done)")
	case req.Exclusive:
		return fault.Usagef("--exclusive: a group's candidates run at the same time, each in its own worktree")
	case req.Worktree != nil && !*req.Worktree:
		return fault.Usagef("--worktree=false: each candidate of a group works in a worktree of its own")
	case a.PrintAnswer:
		return fault.Usagef("--print-answer: a group has several answers ('runner compare GROUP' shows them)")
	case f.CheckRetry < 0 || f.CheckTimeout < 0 || f.BudgetTokens < 0 || f.BudgetUSD < 0:
		return fault.Usagef("--check-retry, --check-timeout, --group-budget-tokens and --group-budget-usd take positive values")
	case !f.Active() && f.Given():
		return fault.Usagef("--check, --check-retry, --vote and --group-budget-* go with a group (--agents or --tries)")
	}
	return nil
}

// newGroup is the group's record (its snapshot not yet taken): its
// project, here, its text and its check.
func newGroup(ctx context.Context, s Starter, a Request) (*state.Group, error) {
	st, err := s.State(ctx)
	if err != nil {
		return nil, err
	}
	arg := a.Req.Project
	if h, dir, ok := hosts.Path(arg); ok {
		return nil, fault.Usagef("project %q is on host %s: a group starts from your repository here; give the path here (the same path on the host: --host %s %s)", arg, h, h, dir)
	}
	place, err := projects.Resolve(st, arg, "")
	if err != nil {
		return nil, err
	}
	if place.Host != "" {
		return nil, fault.Usagef("project %q is on host %s: a group starts from your repository here; give the path here (the same path on the host: --host %s %s)", arg, place.Host, place.Host, place.Dir)
	}
	f := a.Flags
	g := &state.Group{ID: state.NewGroupID(), Project: place.Project, Dir: place.Dir, Text: textutil.Headline(a.Req.Text, 100), // as a task's title
		Created: s.Now(), Check: f.Check, CheckTimeout: f.CheckTimeout, CheckRetry: f.CheckRetry, Vote: f.Vote,
		BudgetTokens: f.BudgetTokens, BudgetUSD: f.BudgetUSD}
	if g.Check == "" && a.Req.Policy != nil {
		g.Check = a.Req.Policy(place.Project).Check
	}
	return g, nil
}

// SuperviseHere sees group id through in this process (a foreground
// dispatch, Supervise); when ctx ends first (the dispatch interrupted),
// the candidates still at work are cancelled.
func SuperviseHere(ctx context.Context, d Deps, id string) (*state.Group, map[string]*state.Task, error) {
	g, tasks, err := Supervise(ctx, d, id)
	if err != nil && ctx.Err() != nil {
		CancelAtWork(context.WithoutCancel(ctx), d, id, "the group's dispatch was interrupted")
	}
	return g, tasks, err
}
