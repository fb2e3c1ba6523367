// Env, the settings a task runs with, and the task writes every part of
// runner shares.

package runner

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/runner/record"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/messaging"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// Env is what the domain operations need from the outside world. cmd/runner
// builds one per command.
type Env struct {
	Store    *state.Store
	TC       *tmuxctl.Client
	Profiles []*profile.Profile
	Getenv   func(string) string
	// Environ lists the environment (for the profiles' pass_env); nil
	// means none is passed beyond the fixed variables.
	Environ func() []string
	// Exe is the absolute path of the runner binary (started as the
	// supervisor, used in hooks and for the sim profile's "runner").
	Exe string
	// Progress receives one-line progress messages (stderr in the
	// foreground; nil for none).
	Progress io.Writer
	// Log, when set, receives those messages instead, as records (the
	// supervisor's log, `runner supervise --log-level`).
	Log *slog.Logger
	// Now returns the time; nil means time.Now.
	Now func() time.Time

	// Hosts holds the connections to hosts (made by the caller; one per
	// command or supervisor). Nil: no task or project on a host can be
	// reached.
	Hosts *hosts.Pool
}

func (e *Env) Time() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return clock.Now()
}

func (e *Env) Say(format string, args ...any) {
	if e.Log != nil {
		e.Log.Info(fmt.Sprintf(format, args...))
		return
	}
	if e.Progress != nil {
		fmt.Fprintf(e.Progress, "runner: "+format+"\n", args...)
	}
}

// RunSettings are the dispatch options a supervisor needs; they are stored
// with the task so a detached or resumed supervisor behaves the same.
type RunSettings struct {
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
	Start *StartSpec `json:"start,omitempty"`
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
	// limitMargin is waited past a reset the CLI gave: its clock and the
	// provider's may differ.
	limitMargin = 5 * time.Second
)

// SettingsOf decodes t's settings (RunSettings), the one place that does:
// none recorded (an older runner's task) is the zero value; a record that
// does not decode is an error naming the task, never silently zero
// settings (a zero timeout, no start spec).
func SettingsOf(t *state.Task) (RunSettings, error) {
	var set RunSettings
	if len(t.Settings) == 0 {
		return set, nil
	}
	if err := json.Unmarshal(t.Settings, &set); err != nil {
		return set, fmt.Errorf("task %s: its recorded settings do not decode (%v): the record is damaged; 'runner state repair' or dispatch it again", t.ID, err)
	}
	return set, nil
}

// StartSpec is what starting a task's agent needs beyond its record. It is
// kept with the task's settings, so the process that waited for a queued
// task's dependencies can start it.
type StartSpec struct {
	Argv            []string     `json:"argv"` // argv[0] absolute
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
	// Sandbox runs the agent in a bubblewrap sandbox (dispatch --sandbox):
	// see localSite.sandbox and remote.SandboxArgv.
	Sandbox *SandboxSpec `json:"sandbox,omitempty"`
}

// SandboxSpec is a sandboxed task's part of StartSpec.
type SandboxSpec struct {
	// Paths are the user's additions to what the agent may write (config
	// sandbox_paths), as profile.SandboxPaths are written.
	Paths []string `json:"paths,omitempty"`
	// Home is the CLI directories' mode: SandboxHomeTask copies them for
	// the task (config sandbox_home, dispatch --sandbox-home); "" shares
	// them.
	Home string `json:"home,omitempty"`
}

// Env looks name up in the environment runner was given (Getenv), else in
// the process's.
func (env *Env) Env(name string) string {
	if env.Getenv != nil {
		return env.Getenv(name)
	}
	return os.Getenv(name)
}

// rec is the task record's writer (package record) over env's store,
// clock and warnings: a value, made when asked.
func (env *Env) Record() record.Book {
	return record.Book{Store: env.Store, Now: env.Time, Warn: env.Warn, Procs: LiveProcs{}}
}

// TaskTitle is a task's first line, clipped for messages and labels.
func TaskTitle(s string) string { return textutil.Headline(s, 100) }

// settleFor picks the settle time: --settle, else the profile's, else the
// config's.
func (s RunSettings) settleFor(p *profile.Profile) time.Duration {
	switch {
	case s.Settle > 0:
		return s.Settle
	case p.Settle.Duration > 0:
		return p.Settle.Duration
	}
	return s.DefaultSettle
}

// warn says what went wrong on the progress writer, or on stderr when
// there is none (a --json run): a lost write is never silent.
func (env *Env) Warn(format string, args ...any) {
	if env.Log != nil {
		env.Log.Warn(fmt.Sprintf(format, args...))
		return
	}
	w := env.Progress
	if w == nil {
		w = os.Stderr
	}
	fmt.Fprintf(w, "runner: "+format+"\n", args...)
}
