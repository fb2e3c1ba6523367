// Package settings holds what a task runs with, as recorded with it: the
// dispatch options its supervisor needs (Run), how its agent starts
// (Start, Sandbox) and its budget (Budget). A detached or resumed
// supervisor decodes them (Of) and behaves as the dispatch would have.
// Pure: it decodes and reads, and runs nothing.
package settings

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/messaging"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Run are the dispatch options a supervisor needs; they are stored with
// the task so a detached or resumed supervisor behaves the same.
type Run struct {
	Timeout       time.Duration           `json:"timeout"`
	ReadyTimeout  time.Duration           `json:"ready_timeout"`
	Settle        time.Duration           `json:"settle"`         // from --settle; 0: the profile's, else DefaultSettle
	DefaultSettle time.Duration           `json:"default_settle"` // the config's settle
	Idle          time.Duration           `json:"idle"`
	YesTrust      bool                    `json:"yes_trust,omitempty"`
	WaitInput     bool                    `json:"wait_input,omitempty"`
	ApproveRules  []string                `json:"approve_rules,omitempty"`
	Commit        bool                    `json:"commit,omitempty"`
	CommitBranch  bool                    `json:"commit_branch,omitempty"`
	CommitAll     bool                    `json:"commit_all,omitempty"`
	Notify        []string                `json:"notify,omitempty"`
	NotifyTimeout time.Duration           `json:"notify_timeout,omitempty"`
	Awareness     messaging.AwarenessMode `json:"awareness,omitempty"`
	AwarenessMax  int                     `json:"awareness_max,omitempty"`
	Detached      bool                    `json:"detached,omitempty"`

	// NoTmuxMessage turns off the tmux display-message in the project's
	// session when the task ends or needs input (config notify_tmux).
	NoTmuxMessage bool `json:"no_tmux_message,omitempty"`
	// NoOverlapMessages: the agent is not told when another task changes
	// the files it changed (dispatch --overlap-messages=false, config
	// overlap_messages); its overlaps are still recorded.
	NoOverlapMessages bool `json:"no_overlap_messages,omitempty"`
	// MaxTurns is the task's turn budget (dispatch --max-turns, config
	// max_turns): the prompts delivered to it and to the tasks under it,
	// together; 0 is none.
	MaxTurns int `json:"max_turns,omitempty"`
	// BudgetTokens and BudgetUSD are the task's token and dollar budgets
	// (dispatch --budget-tokens, --budget-usd; config budget_tokens,
	// budget_usd): what it and the tasks under it used, as their CLIs
	// recorded it; 0 is none.
	BudgetTokens int64   `json:"budget_tokens,omitempty"`
	BudgetUSD    float64 `json:"budget_usd,omitempty"`
	// OnLimit is what a turn that ends on the agent's usage or rate limit
	// does (dispatch --on-limit, config on_limit): OnLimitFail (the
	// default) or OnLimitWait; LimitContinue is the prompt delivered once
	// it is waited out, LimitWait the wait when the CLI gave no reset.
	OnLimit       string        `json:"on_limit,omitempty"`
	LimitContinue string        `json:"limit_continue,omitempty"`
	LimitWait     time.Duration `json:"limit_wait,omitempty"`
	// Start is how to start the agent; Dispatch fills it in.
	Start *Start `json:"start,omitempty"`
}

// The --on-limit choices.
const (
	OnLimitFail = "fail"
	OnLimitWait = "wait"
)

// Defaults of the --on-limit wait.
const (
	DefaultLimitContinue = "continue"
	DefaultLimitWait     = 15 * time.Minute
	// LimitMargin is waited past a reset the CLI gave: its clock and the
	// provider's may differ.
	LimitMargin = 5 * time.Second
)

// Of decodes t's settings (Run), the one place that does:
// none recorded (an older runner's task) is the zero value; a record that
// does not decode is an error naming the task, never silently zero
// settings (a zero timeout, no start spec).
func Of(t *state.Task) (Run, error) {
	var set Run
	if len(t.Settings) == 0 {
		return set, nil
	}
	if err := json.Unmarshal(t.Settings, &set); err != nil {
		return set, fmt.Errorf("task %s: its recorded settings do not decode (%v): the record is damaged; 'runner state repair' or dispatch it again", t.ID, err)
	}
	return set, nil
}

// Start is what starting a task's agent needs beyond its record. It is
// kept with the task's settings, so the process that waited for a queued
// task's dependencies can start it.
type Start struct {
	Argv []string `json:"argv"` // argv[0] absolute
	// Env are KEY=VALUE variables the agent's pane gets besides its
	// profile's (the asking mode's of --permissions ask).
	Env             []string     `json:"env,omitempty"`
	Size            tmuxctl.Size `json:"size"`
	UseHook         bool         `json:"use_hook,omitempty"`
	RequireSnapshot bool         `json:"require_snapshot,omitempty"`
	// Exclusive and WaitLock: the project lock is taken when a queued task
	// starts (a task that starts at once takes it at dispatch).
	Exclusive bool `json:"exclusive,omitempty"`
	WaitLock  bool `json:"wait_lock,omitempty"`
	// Worktree runs the task in a git worktree of its own, on branch
	// runner/<id> made from its snapshot (see startWorktree).
	Worktree bool `json:"worktree,omitempty"`
	// Setup makes the worktree ready (files copied or linked from the
	// project, a command run) before the agent starts.
	Setup *config.WorktreeSetup `json:"setup,omitempty"`
	// From is a worktree task whose branch this one starts from (dispatch
	// --after ID --from ID): its worktree, leftovers committed, is what
	// the snapshot takes.
	From string `json:"from,omitempty"`
	// Snapshot is a snapshot taken already (a group's, in the task's
	// repository) that the task starts from instead of taking its own:
	// it is recorded again under the task's id (gitsnap.Alias).
	Snapshot string `json:"snapshot,omitempty"`
	// Sandbox runs the agent in a sandbox (dispatch --sandbox): see
	// runner's localSite.sandbox and remote.SandboxArgv.
	Sandbox *Sandbox `json:"sandbox,omitempty"`
}

// Sandbox is a sandboxed task's part of Start.
type Sandbox struct {
	// Paths are the user's additions to what the agent may write (config
	// sandbox_paths), as profile.SandboxPaths are written.
	Paths []string `json:"paths,omitempty"`
	// Home is the CLI directories' mode: SandboxHomeTask copies them for
	// the task (config sandbox_home, dispatch --sandbox-home); "" shares
	// them.
	Home string `json:"home,omitempty"`
	// Checked is what the dispatch resolved and checked of the task's
	// place, for every later start to hold the sandbox's binds to
	// (confine.CheckPlace); nil in records of runners before it.
	Checked *Checked `json:"checked,omitempty"`
}

// Checked is a sandboxed task's place as its dispatch checked it.
type Checked struct {
	// Within is the folder, resolved, that a child dispatched through a
	// sandboxed task's door must stay in: its parent's ("" for a task
	// dispatched from outside). Such a child's folder is recorded
	// resolved, and no part of it may be a link at any start.
	Within string `json:"within,omitempty"`
	// GitCommon is the repository's common git directory, resolved, at
	// the dispatch ("" when there was none): the only one outside the
	// task's folder its sandbox makes writable.
	GitCommon string `json:"git_common,omitempty"`
}

// TaskTimeout is the time a turn has from its delivery: --timeout (the
// config's task_timeout), else config.DefaultTaskTimeout (a record of a
// runner that kept 0). The one place the default is applied.
func (s Run) TaskTimeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return config.DefaultTaskTimeout
}

// SettleFor picks the settle time: --settle, else the profile's, else the
// config's.
func (s Run) SettleFor(p *profile.Profile) time.Duration {
	switch {
	case s.Settle > 0:
		return s.Settle
	case p.Settle.Duration > 0:
		return p.Settle.Duration
	}
	return s.DefaultSettle
}

// The sandbox_home modes (Sandbox.Home).
const (
	SandboxHomeShared = "shared" // the CLI's own directories, writable (the default)
	SandboxHomeTask   = "task"   // a copy per task
)

// ValidSandboxHome reports whether s names a sandbox home mode ("" is the
// default, shared).
func ValidSandboxHome(s string) bool {
	return s == "" || s == SandboxHomeShared || s == SandboxHomeTask
}

// Budget is a task's budget: 0 in a field is none.
type Budget struct {
	Turns  int
	Tokens int64
	USD    float64
}

// Budget is the budget these settings give.
func (s Run) Budget() Budget {
	return Budget{Turns: s.MaxTurns, Tokens: s.BudgetTokens, USD: s.BudgetUSD}
}

// BudgetOf is a task's budget from its recorded settings (none when they
// do not decode).
func BudgetOf(t *state.Task) Budget {
	set, err := Of(t)
	if err != nil {
		return Budget{}
	}
	return set.Budget()
}
