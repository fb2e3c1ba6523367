package plan

import (
	"cmp"
	"math"
	"path/filepath"
	"time"

	"github.com/runner-cli/runner/runner/breadth"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/messaging"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/tmuxctl"
)

// Flags are `runner dispatch`'s flags as given (its text read, --size and
// --notify parsed), before the config: Request makes a Request of them
// over the config. A flag not given is its zero value; the three that
// may be turned off (--worktree, --sandbox, --overlap-messages) are nil
// when not given, and the config decides.
type Flags struct {
	Project, Text             string
	Agent, Model, Permissions string
	AgentArgs, Approve, After []string
	From, Source, Host        string
	SandboxHome, Awareness    string
	Size                      tmuxctl.Size
	// Notify is --notify's argv; nil: the config's notify_command.
	Notify []string

	YesTrust, Detach, WaitInput, RequireSnapshot bool
	Exclusive, WaitLock, NoHook                  bool
	Commit, CommitBranch, CommitAll              bool
	Worktree, Sandbox, OverlapMessages           *bool

	Timeout, ReadyTimeout, Settle, Idle time.Duration
	MaxTurns                            int
	BudgetTokens                        int64
	BudgetUSD                           float64
	OnLimit                             string
	LimitWait                           time.Duration

	// Confined is the sandboxed task that asks, through its door
	// (door.EnvConfined); "" for none.
	Confined string
}

// Request is what the flags ask of runner.Dispatch, over the config cfg:
// the agent, the notify command and the run settings defaulted from it,
// where the task runs (Host), and, asked through a sandboxed task's door,
// that task's confinement (its child runs here, and gives runner no
// command to run). A bad flag is a usage error that names it.
func (f Flags) Request(cfg *config.Config) (Request, error) {
	if f.Agent == "" {
		f.Agent = cfg.DefaultAgent
	}
	notify := f.Notify
	if len(notify) == 0 {
		notify = cfg.NotifyCommand
	}
	set, err := f.settings(cfg, notify)
	if err != nil {
		return Request{}, err
	}
	req := Request{Project: f.Project, Text: f.Text, Agent: f.Agent, Model: cfg.ResolveModel(f.Agent, f.Model),
		AgentArgs: f.AgentArgs, Permissions: f.Permissions, PermissionsDefault: cfg.Permissions, RequireSnapshot: f.RequireSnapshot,
		Exclusive: f.Exclusive, WaitLock: f.WaitLock, Worktree: f.Worktree, From: f.From,
		Policy: cfg.PolicyFor, Sandbox: f.Sandbox, SandboxPaths: cfg.SandboxPaths, Source: f.Source, Size: f.Size, UseHook: !f.NoHook, Settings: set,
		MaxLevel: cfg.MaxLevel, Tree: breadth.Bounds{MaxTasks: cfg.MaxTreeTasks, PerMinute: cfg.MaxTreeDispatchesPerMinute},
		After: f.After, Host: f.host(cfg), SandboxHome: cmp.Or(f.SandboxHome, cfg.SandboxHome)}
	if f.Confined != "" {
		switch {
		case len(f.Notify) > 0:
			return Request{}, fault.Usagef("--notify: a sandboxed task cannot give runner a command to run")
		case f.Host != "":
			return Request{}, fault.Usagef("--host: a sandboxed task dispatches only on this machine, into its own folder")
		}
		req.Confined, req.Host = f.Confined, "" // not the config's pool either
	}
	return req, nil
}

// host is where the task runs: --host (local: this machine), else the
// config's pool for an absolute path that is not on a host.
func (f Flags) host(cfg *config.Config) string {
	switch {
	case f.Host == "local":
		return ""
	case f.Host == "" && cfg.Pool != "" && filepath.IsAbs(f.Project):
		return cfg.Pool
	}
	return f.Host
}

// settings are the task's run settings: the flags over the config,
// notify being the command already chosen.
func (f Flags) settings(cfg *config.Config, notify []string) (settings.Run, error) {
	awareness := cfg.Awareness.Mode
	if f.Awareness != "" {
		m, err := messaging.ParseAwarenessMode(f.Awareness)
		if err != nil {
			return settings.Run{}, fault.Usagef("--awareness: %v", err)
		}
		awareness = m
	}
	set := settings.Run{
		Timeout: or(f.Timeout, cfg.TaskTimeout.Duration), ReadyTimeout: or(f.ReadyTimeout, cfg.ReadyTimeout.Duration),
		Settle: f.Settle, DefaultSettle: cfg.Settle.Duration, Idle: or(f.Idle, cfg.Idle.Duration),
		YesTrust: f.YesTrust, WaitInput: f.WaitInput, ApproveRules: append(append([]string(nil), cfg.ApproveRules...), f.Approve...),
		Commit: f.Commit || f.CommitBranch || f.CommitAll, CommitBranch: f.CommitBranch, CommitAll: f.CommitAll,
		Notify: notify, NotifyTimeout: cfg.NotifyTimeout.Duration, Awareness: awareness, AwarenessMax: cfg.Awareness.MaxChars,
		Detached: f.Detach, NoTmuxMessage: !cfg.NotifyTmux, NoOverlapMessages: !cfg.OverlapMessages,
	}
	if f.OverlapMessages != nil {
		set.NoOverlapMessages = !*f.OverlapMessages
	}
	if f.MaxTurns < 0 {
		return settings.Run{}, fault.Usagef("--max-turns %d: give a count of turns", f.MaxTurns)
	}
	set.MaxTurns = f.MaxTurns // 0: the config's for the project, once resolved
	if err := f.spendLimits(&set, cfg); err != nil {
		return settings.Run{}, err
	}
	return set, nil
}

// spendLimits sets the budgets and what a provider's usage limit does
// (--budget-tokens, --budget-usd, --on-limit, --limit-wait over the
// config), and says which flag is wrong.
func (f Flags) spendLimits(set *settings.Run, cfg *config.Config) error {
	if f.BudgetTokens < 0 {
		return fault.Usagef("--budget-tokens %d: give a count of tokens", f.BudgetTokens)
	}
	if f.BudgetUSD < 0 || math.IsNaN(f.BudgetUSD) || math.IsInf(f.BudgetUSD, 0) {
		return fault.Usagef("--budget-usd %v: give an amount of dollars such as 2.50", f.BudgetUSD)
	}
	set.BudgetTokens, set.BudgetUSD = f.BudgetTokens, f.BudgetUSD
	set.OnLimit, set.LimitContinue, set.LimitWait = cfg.OnLimit, cfg.LimitContinue, cfg.LimitWait.Duration
	if f.OnLimit != "" {
		set.OnLimit = f.OnLimit
	}
	if f.LimitWait < 0 {
		return fault.Usagef("--limit-wait %s: give a positive duration such as 20m", f.LimitWait)
	}
	if f.LimitWait > 0 {
		set.LimitWait = f.LimitWait
	}
	if set.OnLimit != "" && set.OnLimit != settings.OnLimitWait && set.OnLimit != settings.OnLimitFail {
		return fault.Usagef("--on-limit %q: give wait or fail", set.OnLimit)
	}
	return nil
}

// or is the flag's duration when it was given, else the config's.
func or(flag, cfg time.Duration) time.Duration {
	if flag > 0 {
		return flag
	}
	return cfg
}
