package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/runner-cli/runner/cmd/runner/exitcode"
	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/door"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/group"
	"github.com/runner-cli/runner/state"
	"github.com/spf13/pflag"
)

// addGroupFlags adds the group flags of `runner dispatch`.
func addGroupFlags(fl *pflag.FlagSet, g *group.Flags) {
	fl.StringSliceVar(&g.Agents, "agents", nil, "run the task as a group: one candidate per agent, each in a worktree of its own from one snapshot (names may repeat: claude,claude); with --host, spread over the hosts, the snapshot carried to each; see 'runner compare'")
	fl.IntVar(&g.Tries, "tries", 0, "run the task as a group of N candidates of one agent (--agent), each in a worktree of its own")
	fl.StringVar(&g.Check, "check", "", "with a group: a shell command run in each candidate's worktree when its turn ends done (default: the project's check in the config)")
	fl.DurationVar(&g.CheckTimeout, "check-timeout", 0, "end a check that runs longer than this (default 10m)")
	fl.IntVar(&g.CheckRetry, "check-retry", 0, "send a failed check's output back to its agent as a follow-up turn, up to N times")
	fl.Int64Var(&g.BudgetTokens, "group-budget-tokens", 0, "with a group: cancel the candidates still at work once all of them together used N tokens (each candidate keeps --budget-tokens too)")
	fl.Float64Var(&g.BudgetUSD, "group-budget-usd", 0, "with a group: cancel the candidates still at work once all of them together cost X dollars")
	fl.BoolVar(&g.Vote, "vote", false, "with a group: once all candidates ended, each candidate's agent names the best other candidate (see 'runner vote')")
}

// runGroup dispatches one candidate per agent, each a detached task in a
// worktree of its own from the group's snapshot (group.Dispatch), then
// sees the group through here (foreground) or in a `runner
// group-supervise` process.
func (a *app) runGroup(ctx context.Context, f dispatchOptions, env *runner.Env, cfg *config.Config, req runner.DispatchRequest) error {
	req.Host = group.Where(f.plan.Host) // a group runs here, or where --host says: not in the config's pool
	s := groupStarter{groupLauncher{group.Setup{Store: env.Store, Pool: env.Hosts}, env,
		group.Candidates{Req: req, Model: f.model, Models: cfg.ResolveModel, Awareness: f.awareness}}}
	g, err := group.Dispatch(ctx, s, group.Request{Req: req, Flags: f.group, Agent: req.Agent, Profiles: env.Profiles,
		Detach: f.plan.Detach, PrintAnswer: f.printAnswer})
	switch {
	case err != nil:
		return err
	case !f.plan.Detach:
		return a.superviseGroup(ctx, env, g.ID, f.asJSON)
	case f.asJSON:
		return a.printJSON(map[string]any{"group": g.ID, "tasks": g.Tasks})
	}
	fmt.Fprintln(a.out, g.ID)
	return nil
}

// groupStarter is what group.Dispatch takes: the launcher, and the Env's
// state, clock and self-spawn.
type groupStarter struct{ groupLauncher }

func (s groupStarter) State(ctx context.Context) (*state.State, error) { return s.env.Store.Read(ctx) }

func (s groupStarter) Now() time.Time { return s.env.Time() }

func (s groupStarter) StartSupervisor(id string) (int, error) {
	return s.env.SpawnRunner(groupLog(s.env, id), nil, "group-supervise", id)
}

func (s groupStarter) UpdateGroup(ctx context.Context, id string, fn func(*state.Group) error) error {
	return s.env.Store.UpdateGroup(ctx, id, fn)
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
	g, tasks, err := group.SuperviseHere(ctx, d, id)
	if err != nil {
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
		return &exitcode.Error{Code: exitcode.ExitBudget, Err: fmt.Errorf("group %s: %s; %d of %d candidates succeeded (runner compare %s)", id, g.Stopped, ok, total, id)}
	case ok == total:
		return nil
	case ok > 0:
		return &exitcode.Error{Code: exitcode.ExitSomeFailed, Err: fmt.Errorf("group %s: %d of %d candidates succeeded (runner compare %s; runner pick %s --by check)", id, ok, total, id, id)}
	}
	return &exitcode.Error{Code: exitcode.ExitFailed, Err: fmt.Errorf("group %s: no candidate succeeded (runner compare %s)", id, id)}
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
	d.Store = foregroundStore{env.Store} // its caller waits for its exit
	g, tasks, err := group.Await(ctx, d, o.ids[0], a.getenv(door.EnvConfined) == "")
	switch {
	case err != nil && g != nil && errors.Is(err, context.DeadlineExceeded):
		return &exitcode.Error{Code: exitcode.ExitTimeout, Err: fmt.Errorf("group %s has not ended after %s (runner compare %s)", g.ID, o.timeout, g.ID)}
	case err != nil:
		return err
	}
	return a.groupOutcome(ctx, d, g, tasks, o.asJSON)
}
