// Package config reads runner's configuration: the config file
// ($RUNNER_CONFIG, else $XDG_CONFIG_HOME/runner/config.json, else
// ~/.config/runner/config.json: Path), decoded strictly (an unknown key or
// a bad value is an error naming it: Parse, Load) over the built-in
// defaults (DefaultConfig), the agent files of its agents/ directory
// (ReadAgentFiles, CheckAgentFile) and the state directory and store it
// names (StateDir, OpenStore). It decides nothing about tasks.
package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/runner-cli/runner/runner/messaging"
	"github.com/runner-cli/runner/runner/profile"

	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/state"
)

// Config is the user's configuration file, read by Load. Every key is
// optional; DefaultConfig holds the values used for absent keys. Durations
// are Go duration strings ("30s", "1h").
type Config struct {
	// DefaultAgent is the profile used when --agent is not given.
	DefaultAgent string `json:"default_agent"`
	// ReadyTimeout bounds the wait for a launched agent to show its prompt.
	ReadyTimeout profile.Duration `json:"ready_timeout"`
	// TaskTimeout bounds one task (one turn) before it is "timeout".
	TaskTimeout profile.Duration `json:"task_timeout"`
	// Idle is how long a profile without markers must show no activity
	// and a stable screen to be done.
	Idle profile.Duration `json:"idle"`
	// Settle is how long a ready marker must stay with no busy marker to
	// be done.
	Settle profile.Duration `json:"settle"`
	// EnterDelay, when set, replaces every profile's Enter delay, except
	// where a profile override in Profiles sets its own "enter_delay".
	EnterDelay profile.Duration `json:"enter_delay,omitzero"`
	// Retention is how long finished tasks are kept in the state.
	Retention profile.Duration `json:"retention"`
	// Awareness controls the cross-task block delivered before a task.
	Awareness Awareness `json:"awareness"`
	// NotifyCommand is an argv run after a task ends (empty: none).
	NotifyCommand []string `json:"notify_command,omitempty"`
	// NotifyTimeout bounds one run of NotifyCommand.
	NotifyTimeout profile.Duration `json:"notify_timeout"`
	// NotifyTmux shows a message (tmux display-message) to the clients
	// attached to a project's session when one of its tasks ends or needs
	// input.
	NotifyTmux bool `json:"notify_tmux"`
	// NotifyPush are the targets pushed to when a task needs its user
	// (a webhook, an ntfy topic: PushTarget), by the one push sender.
	NotifyPush []PushTarget `json:"notify_push,omitempty"`
	// ServeURL is where runner serve is reached from the user's phone
	// (e.g. "https://box.tailnet.ts.net:7777"): a push links to the
	// task's page there. Empty: no link.
	ServeURL string `json:"serve_url,omitempty"`
	// OverlapMessages tells an agent, at its next idle, when another task
	// of its repository changes files it changed (dispatch
	// --overlap-messages=false turns it off for one task). Overlaps are
	// recorded and shown either way.
	OverlapMessages bool `json:"overlap_messages"`
	// MaxTurns maps a project name (or "*" for every project) to its
	// tasks' turn budget (dispatch --max-turns): the turns of a task and
	// of its child tasks together.
	MaxTurns map[string]int `json:"max_turns,omitempty"`
	// BudgetTokens and BudgetUSD map a project name (or "*") to its
	// tasks' token and dollar budgets (dispatch --budget-tokens,
	// --budget-usd), counted over a task's tree as its agents' CLIs
	// recorded them.
	BudgetTokens map[string]int64 `json:"budget_tokens,omitempty"`
	// OnLimit is what a task does when its agent's turn ends on the
	// provider's usage or rate limit (dispatch --on-limit): "fail" ends
	// it (exit 7); "wait" waits until the reset the CLI gave (or
	// LimitWait when it gave none) and delivers LimitContinue.
	OnLimit string `json:"on_limit,omitempty"`
	// LimitContinue is the prompt delivered after a limit was waited out.
	LimitContinue string `json:"limit_continue,omitempty"`
	// LimitWait is how long to wait out a limit whose CLI gave no reset.
	LimitWait profile.Duration   `json:"limit_wait,omitzero"`
	BudgetUSD map[string]float64 `json:"budget_usd,omitempty"`
	// ApproveRules are regular expressions: an approval dialog whose text
	// matches one is answered "yes"; any other stops the task (needs_input).
	ApproveRules []string `json:"approve_rules,omitempty"`
	// ModelAliases maps a profile name (or "*" for every profile) to
	// aliases for --model: alias → the model id passed to the agent.
	// The file's entries are merged into DefaultModelAliases; an alias set
	// to "" removes it.
	ModelAliases map[string]map[string]string `json:"model_aliases"`
	// ProfileOverrides maps a profile name to a partial profile (the keys
	// `runner agents show NAME` prints). A built-in name is overlaid with
	// MergeProfile; a new name defines a whole new profile.
	ProfileOverrides map[string]json.RawMessage `json:"profiles,omitempty"`
	// Isolation maps a project name (or "*" for every project) to how its
	// tasks work: "worktree" (each in a git worktree of its own, as
	// dispatch --worktree) or "none" (in the project's directory, the
	// default). dispatch --worktree=false|true overrides it.
	Isolation map[string]string `json:"isolation,omitempty"`
	// Sandbox maps a project name (or "*" for every project) to whether
	// its agents run in a bubblewrap sandbox (dispatch --sandbox): the
	// file system read-only but the task's folder and what the agent
	// needs. dispatch --sandbox=false|true overrides it.
	Sandbox map[string]bool `json:"sandbox,omitempty"`
	// Check maps a project name (or "*") to the shell command a group's
	// candidates are checked with in their worktrees (dispatch --agents
	// or --tries; dispatch --check overrides it).
	Check map[string]string `json:"check,omitempty"`
	// SandboxPaths are more paths a sandboxed agent may write (as a
	// profile's sandbox_paths: "~/x", "$VAR/x", a trailing "/" for a
	// directory made when missing).
	SandboxPaths []string `json:"sandbox_paths,omitempty"`
	// SandboxHome is "shared" (the default: a sandboxed agent writes its
	// CLI's own directories, ~/.claude …) or "task" (a copy of them per
	// task, dropped with it: a hook planted there never reaches the CLI
	// you run). dispatch --sandbox-home overrides it.
	SandboxHome string `json:"sandbox_home,omitempty"`
	// Pool is where a dispatch of an absolute path with no --host goes:
	// a pool of hosts, "any" or "label:L" (dispatch --host local keeps it
	// here); empty: this machine.
	Pool string `json:"pool,omitempty"`
	// SandboxReach is whom a sandboxed task's runner msg and runner ask
	// reach (messaging.ReachTree, the default, or ReachAll).
	SandboxReach string `json:"sandbox_reach,omitempty"`
	// Permissions is dispatch's --permissions when the flag is not given:
	// "ask", "auto" or "default" (profile.PermissionsModes); empty:
	// runner's default (profile.DefaultPermissions: ask, or the CLI's own
	// default for a CLI without an asking mode).
	Permissions string `json:"permissions,omitempty"`
	// WorktreeSetup maps a project name (or "*") to how a task's new
	// worktree is made ready before its agent starts.
	WorktreeSetup map[string]*WorktreeSetup `json:"worktree_setup,omitempty"`
	// Ports is where each task's range of TCP ports (RUNNER_PORT,
	// RUNNER_PORT_COUNT in its pane) is taken from.
	Ports Ports `json:"ports"`
	// MaxLevel is how deep tasks may dispatch child tasks (0: none).
	MaxLevel int `json:"max_level"`
	// MaxTreeTasks bounds the live tasks of one tree of tasks (a task and
	// all it dispatched, and they dispatched): a child dispatch past it is
	// refused (exit 2). 0: no bound.
	MaxTreeTasks int `json:"max_tree_tasks"`
	// MaxTreeDispatchesPerMinute bounds the child dispatches of one tree
	// in any minute (refused past it, exit 2). 0: no bound.
	MaxTreeDispatchesPerMinute int `json:"max_tree_dispatches_per_minute"`
	// MaxHops bounds how many times a message between tasks is forwarded.
	MaxHops int `json:"max_hops"`
	// MaxMessagesPerRoot bounds the messages in one tree of tasks.
	MaxMessagesPerRoot int `json:"max_messages_per_root"`
	// TmuxBinary is the tmux executable: a name looked up in PATH or an
	// absolute path; empty means "tmux".
	TmuxBinary string `json:"tmux_binary,omitempty"`
	// LockTimeout bounds the wait for the state lock.
	LockTimeout profile.Duration `json:"lock_timeout"`
	// CloseAfter is how long after a task ends its window is closed and
	// its processes ended (as by `runner gc`), by the next runner command
	// that looks at tasks; 0 keeps them until `runner gc`.
	CloseAfter profile.Duration `json:"close_after"`

	approve []*regexp.Regexp
	// path is the file the config was read from ("" for the defaults
	// alone); agentFiles the user's agent files (AgentsDir), applied by
	// Profiles.
	path       string
	agentFiles []*profile.File
}

// Awareness configures the block about other tasks that is delivered to an
// agent before its task.
type Awareness struct {
	// Mode is messaging.AwarenessProject, messaging.AwarenessAll or messaging.AwarenessOff.
	Mode messaging.AwarenessMode `json:"mode"`
	// MaxChars bounds the block's length.
	MaxChars int `json:"max_chars"`
}

// ModelAliasAll is the ModelAliases key whose aliases apply to every
// profile (a profile's own aliases win).
const ModelAliasAll = "*"

// DefaultModelAliases are the aliases shipped with runner. Claude Code and
// Gemini CLI accept some short names themselves; these pin the full ids so
// that a dispatch records which model it asked for.
func DefaultModelAliases() map[string]map[string]string {
	return map[string]map[string]string{
		"claude": {
			"sonnet": "claude-sonnet-4-5",
			"opus":   "claude-opus-4-1",
			"haiku":  "claude-haiku-4-5",
		},
		"codex": {
			"codex": "gpt-5-codex",
			"gpt5":  "gpt-5",
		},
		"gemini": {
			"pro":   "gemini-2.5-pro",
			"flash": "gemini-2.5-flash",
		},
	}
}

// DefaultConfig returns the configuration used when there is no file.
func DefaultConfig() *Config {
	return &Config{
		DefaultAgent:               "claude",
		ReadyTimeout:               profile.Duration{Duration: DefaultReadyTimeout},
		TaskTimeout:                profile.Duration{Duration: DefaultTaskTimeout},
		Idle:                       profile.Duration{Duration: DefaultIdle},
		Settle:                     profile.Duration{Duration: DefaultSettle},
		Retention:                  profile.Duration{Duration: DefaultRetention},
		Awareness:                  Awareness{Mode: messaging.AwarenessProject, MaxChars: 1500},
		NotifyTimeout:              profile.Duration{Duration: DefaultNotifyTimeout},
		NotifyTmux:                 true,
		OverlapMessages:            true,
		ModelAliases:               DefaultModelAliases(),
		MaxLevel:                   3,
		MaxTreeTasks:               DefaultMaxTreeTasks,
		MaxTreeDispatchesPerMinute: DefaultMaxTreeDispatchesPerMinute,
		MaxHops:                    8,
		MaxMessagesPerRoot:         200,
		LockTimeout:                profile.Duration{Duration: state.DefaultLockTimeout},
		CloseAfter:                 profile.Duration{Duration: DefaultCloseAfter},
		Ports:                      Ports{Base: DefaultPortBase, Count: DefaultPortCount},
	}
}

// Ports is the config's ports: each task gets Count ports, the first
// range from Base on that no live task of its machine holds and no
// listener uses (state.AllocatePorts).
type Ports struct {
	Base  int `json:"base"`
	Count int `json:"count"`
}

// The default ports: 20000…20009 for the first task, 20010… the next.
const (
	DefaultPortBase  = 20000
	DefaultPortCount = 10
)

// check refuses a range that is not one of TCP ports.
func (p Ports) check() error {
	switch {
	case p.Base < 1 || p.Base > 65535:
		return fmt.Errorf("ports.base: %d is not a TCP port (1…65535; default %d)", p.Base, DefaultPortBase)
	case p.Count < 1 || p.Count > 1000:
		return fmt.Errorf("ports.count: %d is not a count of ports for a task (1…1000; default %d)", p.Count, DefaultPortCount)
	case p.Base+p.Count-1 > 65535:
		return fmt.Errorf("ports: %d ports from %d go past 65535", p.Count, p.Base)
	}
	return nil
}

// The defaults of the settings that a zero value leaves to the runner: the
// config's DefaultConfig uses them, and so does every place that meets a
// zero setting (one place per default).
const (
	// DefaultTaskTimeout bounds one turn, counted from the delivery of its
	// text (task_timeout, --timeout).
	DefaultTaskTimeout = 60 * time.Minute
	// DefaultIdle and DefaultSettle are the Monitor's (idle, settle,
	// --settle): monitor.DefaultIdle and monitor.DefaultSettle, which a
	// test holds equal (config imports neither the monitor nor the
	// supervisor: it is a leaf of the domain).
	DefaultIdle   = 3 * time.Second
	DefaultSettle = 50 * time.Millisecond
	// DefaultCloseAfter is how long after a task ends its window is closed
	// (close_after).
	DefaultCloseAfter = 2 * time.Hour
	// DefaultReadyTimeout bounds an agent's start-up (ready_timeout,
	// --ready-timeout): supervisor.DefaultReadyTimeout (a test holds them
	// equal).
	DefaultReadyTimeout = 60 * time.Second
	// DefaultNotifyTimeout bounds the notification command (notify_timeout).
	DefaultNotifyTimeout = 10 * time.Second
	// DefaultRetention is how long finished tasks stay in the state
	// (retention): see state.DefaultRetention.
	DefaultRetention = state.DefaultRetention
)

// Where Path found the path.
const (
	ConfigFromEnv  = "RUNNER_CONFIG"
	ConfigFromXDG  = "XDG_CONFIG_HOME"
	ConfigFromHome = "HOME"
)

// Path returns the config file's path and which variable gave it:
// $RUNNER_CONFIG if set, else $XDG_CONFIG_HOME/runner/config.json (an
// absolute XDG_CONFIG_HOME only, as the XDG spec says), else
// ~/.config/runner/config.json. With none of them set (env -i) it returns
// "", "" and the defaults apply.
func Path(getenv func(string) string) (path, source string) {
	if p := getenv("RUNNER_CONFIG"); p != "" {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		return p, ConfigFromEnv
	}
	if d := getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "runner", "config.json"), ConfigFromXDG
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "runner", "config.json"), ConfigFromHome
	}
	return "", ""
}

// Load reads the config file found by Path and the agent files beside it
// (AgentsDir), and returns the config with its path. A missing file (or no
// path at all) gives DefaultConfig and no error. A file that cannot be
// read or is not valid is an error wrapping ErrUsage that names the file
// and the key, or the line and column of a JSON syntax error; a bad agent
// file is a *profile.FileError (a usage error too) naming its file, line
// and key.
func Load(getenv func(string) string) (*Config, string, error) {
	path, _ := Path(getenv)
	if path == "" {
		return DefaultConfig(), "", nil
	}
	files, err := ReadAgentFiles(AgentsDir(getenv))
	if err != nil {
		return nil, path, loadError(path, err)
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		c := DefaultConfig()
		c.path, c.agentFiles = "", files
		if len(files) > 0 {
			if err := c.validate(nil); err != nil {
				return nil, path, loadError(path, err)
			}
		}
		return c, path, nil
	}
	if err != nil {
		return nil, path, fault.Usagef("config %s: %v", path, err)
	}
	c, err := parse(data, path, files)
	if err != nil {
		return nil, path, loadError(path, err)
	}
	return c, path, nil
}

// loadError is err as Load returns it: an agent file's error as it is
// (it names its file and is a usage error), any other naming the config
// file and wrapping ErrUsage.
func loadError(path string, err error) error {
	var fe *profile.FileError
	if errors.As(err, &fe) {
		return fe
	}
	return fault.Usagef("config %s: %v", path, err)
}

var profileNameRE = textutil.LazyRegexp(`^[a-z0-9][a-z0-9_-]*$`)

// validate checks every value and fills what is derived from them: the
// merged model aliases and the compiled approve rules.
// validateTaskSetup checks what a task's start is made of: isolation,
// worktree_setup and ports.
func (c *Config) validateTaskSetup() error {
	if err := c.Ports.check(); err != nil {
		return err
	}
	for p, w := range c.WorktreeSetup {
		if err := w.Check(); err != nil {
			return fmt.Errorf("worktree_setup.%s: %w", p, err)
		}
	}
	for p, v := range c.Isolation {
		if v != "worktree" && v != "none" {
			return fmt.Errorf("isolation.%s: %q is not an isolation (want \"worktree\" or \"none\")", p, v)
		}
	}
	return nil
}

func (c *Config) validate(fileAliases map[string]map[string]string) error {
	if err := c.validateTaskSetup(); err != nil {
		return err
	}
	if err := errors.Join(c.validateBudgets(), c.validatePool()); err != nil {
		return err
	}
	if c.Permissions != "" {
		if err := profile.CheckPermissions("permissions", c.Permissions); err != nil {
			return err
		}
	}
	if c.OnLimit != "" && c.OnLimit != "wait" && c.OnLimit != "fail" {
		return fmt.Errorf("on_limit: %q is not \"wait\" or \"fail\"", c.OnLimit)
	}
	if c.LimitWait.Duration < 0 {
		return fmt.Errorf("limit_wait: %s is negative", c.LimitWait.Duration)
	}
	for _, d := range []struct {
		key    string
		v      time.Duration
		zeroOK bool
	}{
		{"ready_timeout", c.ReadyTimeout.Duration, false},
		{"task_timeout", c.TaskTimeout.Duration, false},
		{"idle", c.Idle.Duration, false},
		{"settle", c.Settle.Duration, true},
		{"retention", c.Retention.Duration, false},
		{"notify_timeout", c.NotifyTimeout.Duration, false},
		{"lock_timeout", c.LockTimeout.Duration, true},
		{"close_after", c.CloseAfter.Duration, true},
	} {
		if d.v == 0 && !d.zeroOK {
			return fmt.Errorf("%s: must be more than 0s", d.key)
		}
	}
	switch c.Awareness.Mode {
	case messaging.AwarenessProject, messaging.AwarenessAll, messaging.AwarenessOff:
	default:
		return fmt.Errorf("awareness.mode: %q is not one of %s|%s|%s", c.Awareness.Mode, messaging.AwarenessProject, messaging.AwarenessAll, messaging.AwarenessOff)
	}
	if c.Awareness.MaxChars <= 0 {
		return fmt.Errorf("awareness.max_chars: %d: must be more than 0 (use \"mode\": \"off\" for no block)", c.Awareness.MaxChars)
	}
	for i, a := range c.NotifyCommand {
		if a == "" && i == 0 {
			return errors.New("notify_command[0]: empty program name (the value is an argv, e.g. [\"notify-send\", \"runner\"])")
		}
	}
	if err := c.validatePush(); err != nil {
		return err
	}
	rules, err := CompileApproveRules("approve_rules", c.ApproveRules)
	if err != nil {
		return err
	}
	c.approve = rules
	for _, n := range []struct {
		key string
		v   int
		min int
	}{{"max_level", c.MaxLevel, 0}, {"max_hops", c.MaxHops, 1}, {"max_messages_per_root", c.MaxMessagesPerRoot, 1},
		{"max_tree_tasks", c.MaxTreeTasks, 0}, {"max_tree_dispatches_per_minute", c.MaxTreeDispatchesPerMinute, 0}} {
		if n.v < n.min {
			return fmt.Errorf("%s: %d: must be at least %d", n.key, n.v, n.min)
		}
	}
	if c.SandboxReach != "" && c.SandboxReach != messaging.ReachTree && c.SandboxReach != messaging.ReachAll {
		return fmt.Errorf("sandbox_reach: %q: want %q or %q", c.SandboxReach, messaging.ReachTree, messaging.ReachAll)
	}
	if strings.Contains(c.TmuxBinary, "/") && !filepath.IsAbs(c.TmuxBinary) {
		return fmt.Errorf("tmux_binary: %q: want a name looked up in PATH or an absolute path", c.TmuxBinary)
	}
	for _, name := range slices.Sorted(maps.Keys(c.ProfileOverrides)) {
		if !profileNameRE.Re().MatchString(name) {
			return fmt.Errorf("profiles.%s: bad profile name (want lowercase letters, digits, '-' and '_')", name)
		}
	}
	return c.validateAgents(fileAliases)
}

// validatePool checks the config's pool: "", any or label:L.
func (c *Config) validatePool() error {
	if l, byLabel := strings.CutPrefix(c.Pool, "label:"); c.Pool != "" && c.Pool != "any" && (!byLabel || !state.ValidName(l)) {
		return fmt.Errorf("pool: %q is not any or label:L (L a host label: a-z, 0-9, '.', '_', '-')", c.Pool)
	}
	return nil
}

// validateBudgets checks max_turns, budget_tokens and budget_usd.
func (c *Config) validateBudgets() error {
	for p, n := range c.MaxTurns {
		if n < 0 {
			return fmt.Errorf("max_turns.%s: %d is not a count of turns (0: no budget)", p, n)
		}
	}
	for p, n := range c.BudgetTokens {
		if n < 0 {
			return fmt.Errorf("budget_tokens.%s: %d is not a count of tokens (0: no budget)", p, n)
		}
	}
	for p, x := range c.BudgetUSD {
		if x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("budget_usd.%s: %v is not an amount of dollars (0: no budget)", p, x)
		}
	}
	return nil
}

// validateAgents checks default_agent and model_aliases against the
// profiles (built-in and the config's), and merges the file's aliases.
func (c *Config) validateAgents(fileAliases map[string]map[string]string) error {
	ps, err := c.Profiles()
	if err != nil {
		return err
	}
	known := map[string]bool{ModelAliasAll: true}
	var names []string
	for _, p := range ps {
		known[p.Name] = true
		names = append(names, p.Name)
	}
	if !known[c.DefaultAgent] || c.DefaultAgent == ModelAliasAll {
		return fmt.Errorf("default_agent: unknown agent %q (known: %s)", c.DefaultAgent, strings.Join(names, ", "))
	}
	for _, prof := range slices.Sorted(maps.Keys(fileAliases)) {
		if !known[prof] {
			return fmt.Errorf("model_aliases.%s: unknown agent (known: %s, or %q for every agent)", prof, strings.Join(names, ", "), ModelAliasAll)
		}
		for alias, model := range fileAliases[prof] {
			if alias == "" {
				return fmt.Errorf("model_aliases.%s: empty alias", prof)
			}
			if c.ModelAliases[prof] == nil {
				c.ModelAliases[prof] = map[string]string{}
			}
			if model == "" {
				delete(c.ModelAliases[prof], alias)
				continue
			}
			c.ModelAliases[prof][alias] = model
		}
	}
	return nil
}

// StateDir returns the state directory: $RUNNER_STATE_DIR (made absolute),
// else $XDG_STATE_HOME/runner (an absolute XDG_STATE_HOME only), else
// ~/.local/state/runner. It is the rule of docs/architecture.md, the same as the state
// package's DefaultDir.
func StateDir(getenv func(string) string) (string, error) { return state.DefaultDir(getenv) }

// The bounds on a tree of tasks' breadth (max_tree_tasks,
// max_tree_dispatches_per_minute): what an orchestrating agent needs, far
// below what a dispatch loop would spend.
const (
	DefaultMaxTreeTasks               = 32
	DefaultMaxTreeDispatchesPerMinute = 30
)
