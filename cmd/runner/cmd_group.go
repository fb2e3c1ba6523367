package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/door"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/group"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/runner/proctree"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/projects"
	"github.com/runner-cli/runner/state"
	"github.com/spf13/pflag"
)

// groupFlags are dispatch's flags of a group (one task, several agents).
type groupFlags struct {
	agents       []string
	tries        int
	triesSet     bool
	check        string
	checkTimeout time.Duration
	checkRetry   int
	vote         bool
	budgetTokens int64
	budgetUSD    float64
}

// active reports whether the dispatch makes a group.
func (g groupFlags) active() bool { return len(g.agents) > 0 || g.triesSet }

// given reports whether a flag that goes with a group was given.
func (g groupFlags) given() bool {
	return g.check != "" || g.vote || g.checkRetry != 0 || g.checkTimeout != 0 || g.budgetTokens != 0 || g.budgetUSD != 0
}

// addGroupFlags adds the group flags of `runner dispatch`.
func addGroupFlags(fl *pflag.FlagSet, g *groupFlags) {
	fl.StringSliceVar(&g.agents, "agents", nil, "run the task as a group: one candidate per agent, each in a worktree of its own from one snapshot (names may repeat: claude,claude); with --host, spread over the hosts, the snapshot carried to each; see 'runner compare'")
	fl.IntVar(&g.tries, "tries", 0, "run the task as a group of N candidates of one agent (--agent), each in a worktree of its own")
	fl.StringVar(&g.check, "check", "", "with a group: a shell command run in each candidate's worktree when its turn ends done (default: the project's check in the config)")
	fl.DurationVar(&g.checkTimeout, "check-timeout", 0, "end a check that runs longer than this (default 10m)")
	fl.IntVar(&g.checkRetry, "check-retry", 0, "send a failed check's output back to its agent as a follow-up turn, up to N times")
	fl.Int64Var(&g.budgetTokens, "group-budget-tokens", 0, "with a group: cancel the candidates still at work once all of them together used N tokens (each candidate keeps --budget-tokens too)")
	fl.Float64Var(&g.budgetUSD, "group-budget-usd", 0, "with a group: cancel the candidates still at work once all of them together cost X dollars")
	fl.BoolVar(&g.vote, "vote", false, "with a group: once all candidates ended, each candidate's agent names the best other candidate (see 'runner vote')")
}

// groupAgents are the candidates' agents: --agents, or --tries of
// --agent; every name known, else bad input before anything is written.
func groupAgents(f dispatchOptions, profs []*profile.Profile) ([]string, error) {
	g := f.group
	switch {
	case len(g.agents) > 0 && g.triesSet:
		return nil, fault.Usagef("--agents and --tries exclude each other: give the agents, or --tries N of one --agent")
	case g.triesSet && (g.tries < 1 || g.tries > 16):
		return nil, fault.Usagef("--tries %d: give 1 to 16 candidates", g.tries)
	case g.triesSet:
		out := make([]string, g.tries)
		for i := range out {
			out[i] = f.agent
		}
		return checkAgents(out, profs)
	case len(g.agents) > 16:
		return nil, fault.Usagef("--agents: %d candidates; at most 16", len(g.agents))
	}
	var out []string
	for _, a := range g.agents {
		if a = strings.TrimSpace(a); a == "" {
			return nil, fault.Usagef("--agents %q: an empty agent name", strings.Join(g.agents, ","))
		}
		out = append(out, a)
	}
	return checkAgents(out, profs)
}

func checkAgents(names []string, profs []*profile.Profile) ([]string, error) {
	for _, n := range names {
		if _, err := profile.FindProfile(profs, n); err != nil {
			return nil, fault.Usagef("--agents: %v", err)
		}
	}
	return names, nil
}

// groupRefusals are the dispatch flags a group does not take.
func groupRefusals(f dispatchOptions) error {
	switch {
	case len(f.after) > 0 || f.from != "":
		return fault.Usagef("--after/--from: a group starts at once (dispatch the group when its dependencies are done)")
	case f.exclusive:
		return fault.Usagef("--exclusive: a group's candidates run at the same time, each in its own worktree")
	case f.worktreeSet && !f.worktree:
		return fault.Usagef("--worktree=false: each candidate of a group works in a worktree of its own")
	case f.printAnswer:
		return fault.Usagef("--print-answer: a group has several answers ('runner compare GROUP' shows them)")
	case f.group.checkRetry < 0 || f.group.checkTimeout < 0 || f.group.budgetTokens < 0 || f.group.budgetUSD < 0:
		return fault.Usagef("--check-retry, --check-timeout, --group-budget-tokens and --group-budget-usd take positive values")
	case !f.group.active() && f.group.given():
		return fault.Usagef("--check, --check-retry, --vote and --group-budget-* go with a group (--agents or --tries)")
	}
	return nil
}

// runGroup dispatches one candidate per agent, each a detached task in a
// worktree of its own from the group's snapshot, then sees the group
// through here (foreground) or in a `runner group-supervise` process.
func (a *app) runGroup(ctx context.Context, f dispatchOptions, env *runner.Env, cfg *config.Config, req runner.DispatchRequest) error {
	if req.Confined != "" {
		// A group's check is a command runner runs, and its worktrees
		// live in the repository's git directory: neither is a sandboxed
		// task's to ask for (as --notify is not).
		return fault.Usagef("--agents/--tries/--check: a sandboxed task cannot start a group")
	}
	agents, err := groupAgents(f, env.Profiles)
	if err != nil {
		return err
	}
	if err := groupRefusals(f); err != nil {
		return err
	}
	g, err := a.newGroup(ctx, f, env, cfg, req)
	if err != nil {
		return err
	}
	if g, err = startGroup(ctx, env, cfg, f, req, g, agents); err != nil {
		return err
	}
	if f.detach {
		pid, err := env.SpawnRunner(groupLog(env, g.ID), nil, "group-supervise", g.ID)
		if err != nil {
			return fmt.Errorf("group %s: start its supervisor: %w (its candidates run; see them with 'runner compare %s')", g.ID, err, g.ID)
		}
		// Recorded now, so that a wait right after sees it run.
		if err := env.Store.UpdateGroup(ctx, g.ID, func(x *state.Group) error {
			if x.SupervisorPID == 0 && x.Ended.IsZero() {
				x.SupervisorPID, x.SupervisorStart = pid, proctree.Identity(pid)
			}
			return nil
		}); err != nil {
			return err
		}
		env.Say("group %s: supervisor %d started (runner wait %s; runner compare %s)", g.ID, pid, g.ID, g.ID)
		if f.asJSON {
			return a.printJSON(map[string]any{"group": g.ID, "tasks": g.Tasks})
		}
		fmt.Fprintln(a.out, g.ID)
		return nil
	}
	return a.superviseGroup(ctx, env, g.ID, f.asJSON)
}

// newGroup is the group's record (its snapshot not yet taken): its
// project, here, its text and its check.
func (a *app) newGroup(ctx context.Context, f dispatchOptions, env *runner.Env, cfg *config.Config, req runner.DispatchRequest) (*state.Group, error) {
	st, err := env.Store.Read(ctx)
	if err != nil {
		return nil, err
	}
	arg := req.Project
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
	g := &state.Group{ID: state.NewGroupID(), Project: place.Project, Dir: place.Dir, Text: runner.TaskTitle(req.Text),
		Created: env.Time(), Check: f.group.check, CheckTimeout: f.group.checkTimeout, CheckRetry: f.group.checkRetry, Vote: f.group.vote,
		BudgetTokens: f.group.budgetTokens, BudgetUSD: f.group.budgetUSD}
	if g.Check == "" {
		g.Check = cfg.PolicyFor(place.Project).Check
	}
	return g, nil
}

// startGroup takes the group's snapshot, carries it to the hosts its
// candidates may run on and dispatches them (group.Start).
func startGroup(ctx context.Context, env *runner.Env, cfg *config.Config, f dispatchOptions, req runner.DispatchRequest, g *state.Group, agents []string) (*state.Group, error) {
	if req.Host == "local" {
		req.Host = ""
	}
	l := groupLauncher{env: env, cfg: cfg, f: f, req: req}
	out, err := group.Start(ctx, l, group.StartRequest{Group: g, Agents: agents, Where: req.Host})
	switch {
	case errors.Is(err, gitsnap.ErrNotRepo) || errors.Is(err, gitsnap.ErrBareRepo) || errors.Is(err, gitsnap.ErrGitMissing):
		return nil, fault.Usagef("a group needs a git repository here (each candidate works in a worktree of its own): %v", err)
	case err != nil:
		return nil, fmt.Errorf("group: %w", err)
	}
	return out, nil
}

// groupLog is the log of a group's supervisor.
func groupLog(env *runner.Env, id string) string {
	return filepath.Join(env.Store.Dir(), "groups", id+".log")
}

// superviseGroup sees the group through in this process, prints the
// comparison and returns the group's exit: 0 when every candidate
// succeeded, 8 when some did, 1 when none did. An interruption cancels
// the candidates still at work.
func (a *app) superviseGroup(ctx context.Context, env *runner.Env, id string, asJSON bool) error {
	d := groupDeps(env)
	g, tasks, err := group.Supervise(ctx, d, id)
	if err != nil {
		if ctx.Err() != nil {
			group.CancelAtWork(context.Background(), d, id, "the group's dispatch was interrupted")
		}
		return err
	}
	return a.groupOutcome(ctx, d, g, tasks, asJSON)
}

// groupOutcome prints an ended group's comparison and returns its exit.
func (a *app) groupOutcome(ctx context.Context, d group.Deps, g *state.Group, tasks map[string]*state.Task, asJSON bool) error {
	id := g.ID
	c, err := group.Compare(ctx, d, id)
	if err != nil {
		return err
	}
	if asJSON {
		if err := a.printJSON(c); err != nil {
			return err
		}
	} else {
		a.printComparison(c)
	}
	ok, total := group.Outcome(g, tasks)
	for _, l := range group.Lost(g, tasks) {
		// Said before the exit's own line: what to resume.
		fmt.Fprintf(a.errOut, "runner: group %s: candidate %s (runner resume it once the host is back)\n", id, l)
	}
	switch {
	case g.Stopped != "" && ok < total:
		return &ExitError{Code: ExitBudget, Err: fmt.Errorf("group %s: %s; %d of %d candidates succeeded (runner compare %s)", id, g.Stopped, ok, total, id)}
	case ok == total:
		return nil
	case ok > 0:
		return &ExitError{Code: ExitSomeFailed, Err: fmt.Errorf("group %s: %d of %d candidates succeeded (runner compare %s; runner pick %s --by check)", id, ok, total, id, id)}
	}
	return &ExitError{Code: ExitFailed, Err: fmt.Errorf("group %s: no candidate succeeded (runner compare %s)", id, id)}
}

// waitGroup waits until a group has ended (runner wait GROUP), then as
// superviseGroup prints it and exits; a group whose supervisor is gone
// is seen through here (not through a sandboxed task's door).
func (a *app) waitGroup(ctx context.Context, o waitOptions) error {
	if o.anyOne || o.untilInput {
		return fault.Usagef("wait GROUP: --any and --input go with task IDs")
	}
	env, _, err := a.runnerEnv(true)
	if err != nil {
		return err
	}
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	d := groupDeps(env)
	g, tasks, err := group.Await(ctx, d, o.ids[0], a.getenv(door.EnvConfined) == "")
	switch {
	case err != nil && g != nil && errors.Is(err, context.DeadlineExceeded):
		return &ExitError{Code: ExitTimeout, Err: fmt.Errorf("group %s has not ended after %s (runner compare %s)", g.ID, o.timeout, g.ID)}
	case err != nil:
		return err
	}
	return a.groupOutcome(ctx, d, g, tasks, o.asJSON)
}
