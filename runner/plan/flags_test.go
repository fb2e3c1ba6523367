package plan

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/messaging"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/tmuxctl"
)

// flagsConfig is a config with every default a request reads set apart
// from the flags.
func flagsConfig() *config.Config {
	cfg := config.DefaultConfig()
	cfg.DefaultAgent = "claude"
	cfg.NotifyCommand = []string{"notify-send", "runner"}
	cfg.ApproveRules = []string{"^ls"}
	cfg.Pool = "any"
	cfg.SandboxHome = "task"
	cfg.OnLimit, cfg.LimitContinue = settings.OnLimitWait, "go on"
	cfg.LimitWait.Duration = 7 * time.Minute
	cfg.Permissions = "auto"
	cfg.MaxLevel, cfg.MaxTreeTasks, cfg.MaxTreeDispatchesPerMinute = 3, 40, 9
	cfg.SandboxPaths = []string{"/opt/cache"}
	return cfg
}

// TestRequestDefaults: what the flags leave open the config gives; the
// request carries the config's policy to ask once the project is known.
func TestRequestDefaults(t *testing.T) {
	cfg := flagsConfig()
	size := tmuxctl.Size{Width: 80, Height: 24}
	req, err := Flags{Project: "api", Text: "add a test", Source: "user", Size: size}.Request(cfg)
	if err != nil {
		t.Fatal(err)
	}
	set := req.Settings
	switch {
	case req.Agent != "claude" || req.Project != "api" || req.Text != "add a test" || req.Size != size || !req.UseHook:
		t.Errorf("request %+v", req)
	case !reflect.DeepEqual(set.Notify, cfg.NotifyCommand):
		t.Errorf("notify %v, want the config's %v", set.Notify, cfg.NotifyCommand)
	case set.Timeout != cfg.TaskTimeout.Duration || set.ReadyTimeout != cfg.ReadyTimeout.Duration || set.Idle != cfg.Idle.Duration:
		t.Errorf("timeouts %s %s %s, want the config's", set.Timeout, set.ReadyTimeout, set.Idle)
	case set.Settle != 0 || set.DefaultSettle != cfg.Settle.Duration:
		t.Errorf("settle %s (default %s): only the flag's is Settle", set.Settle, set.DefaultSettle)
	case !reflect.DeepEqual(set.ApproveRules, []string{"^ls"}):
		t.Errorf("approve rules %v", set.ApproveRules)
	case set.Awareness != cfg.Awareness.Mode || set.AwarenessMax != cfg.Awareness.MaxChars:
		t.Errorf("awareness %q %d", set.Awareness, set.AwarenessMax)
	case set.OnLimit != settings.OnLimitWait || set.LimitContinue != "go on" || set.LimitWait != 7*time.Minute:
		t.Errorf("limit %q %q %s", set.OnLimit, set.LimitContinue, set.LimitWait)
	case set.NoOverlapMessages != !cfg.OverlapMessages || set.NoTmuxMessage != !cfg.NotifyTmux:
		t.Errorf("messages: overlap off %v, tmux off %v", set.NoOverlapMessages, set.NoTmuxMessage)
	case req.Host != "": // a name, not an absolute path: not the pool's
		t.Errorf("host %q for a project name", req.Host)
	case req.SandboxHome != "task" || req.PermissionsDefault != "auto" || req.MaxLevel != 3:
		t.Errorf("sandbox home %q, permissions %q, max level %d", req.SandboxHome, req.PermissionsDefault, req.MaxLevel)
	case req.Tree.MaxTasks != 40 || req.Tree.PerMinute != 9 || !reflect.DeepEqual(req.SandboxPaths, cfg.SandboxPaths):
		t.Errorf("tree %+v, sandbox paths %v", req.Tree, req.SandboxPaths)
	case req.Worktree != nil || req.Sandbox != nil || req.Policy == nil:
		t.Errorf("worktree %v, sandbox %v, policy set %v: the policy decides", req.Worktree, req.Sandbox, req.Policy != nil)
	case req.Confined != "":
		t.Errorf("confined %q without a door", req.Confined)
	}
}

// TestRequestFlagsWin: each flag given wins over the config's value.
func TestRequestFlagsWin(t *testing.T) {
	off, on := false, true
	f := Flags{Project: "/srv/api", Text: "x", Agent: "codex", Approve: []string{"^cat"}, Notify: []string{"mine"},
		Timeout: time.Minute, ReadyTimeout: 2 * time.Minute, Settle: time.Second, Idle: 3 * time.Second,
		CommitAll: true, Detach: true, NoHook: true, Awareness: "off", OverlapMessages: &on, Worktree: &off, Sandbox: &on,
		MaxTurns: 4, BudgetTokens: 100, BudgetUSD: 1.5, OnLimit: "fail", LimitWait: time.Hour, SandboxHome: "shared", Host: "b"}
	req, err := f.Request(flagsConfig())
	if err != nil {
		t.Fatal(err)
	}
	set := req.Settings
	switch {
	case req.Agent != "codex" || req.UseHook || req.Host != "b" || req.SandboxHome != "shared":
		t.Errorf("request %+v", req)
	case *req.Worktree || !*req.Sandbox:
		t.Errorf("worktree %v sandbox %v, want the flags'", *req.Worktree, *req.Sandbox)
	case !reflect.DeepEqual(set.Notify, []string{"mine"}) || !reflect.DeepEqual(set.ApproveRules, []string{"^ls", "^cat"}):
		t.Errorf("notify %v, rules %v (the config's first, then the flags')", set.Notify, set.ApproveRules)
	case set.Timeout != time.Minute || set.ReadyTimeout != 2*time.Minute || set.Settle != time.Second || set.Idle != 3*time.Second:
		t.Errorf("times %+v", set)
	case !set.Commit || !set.CommitAll || set.CommitBranch || !set.Detached:
		t.Errorf("commit %v all %v branch %v detached %v: --commit-all implies --commit", set.Commit, set.CommitAll, set.CommitBranch, set.Detached)
	case set.Awareness != messaging.AwarenessOff || set.NoOverlapMessages:
		t.Errorf("awareness %q, overlap off %v", set.Awareness, set.NoOverlapMessages)
	case set.MaxTurns != 4 || set.BudgetTokens != 100 || set.BudgetUSD != 1.5 || set.OnLimit != "fail" || set.LimitWait != time.Hour:
		t.Errorf("limits %+v", set)
	}
	if set.ApproveRules[0] = "changed"; flagsConfig().ApproveRules[0] != "^ls" {
		t.Error("the request's rules share the config's slice")
	}
}

// TestRequestHost: --host local is this machine, whatever the pool; an
// absolute path without --host goes to the config's pool.
func TestRequestHost(t *testing.T) {
	for _, tc := range []struct {
		project, host, pool, want string
	}{
		{"/srv/api", "", "any", "any"},
		{"./api", "", "any", ""},
		{"api", "", "any", ""},
		{"/srv/api", "local", "any", ""},
		{"/srv/api", "b", "any", "b"},
		{"/srv/api", "", "", ""},
	} {
		cfg := flagsConfig()
		cfg.Pool = tc.pool
		req, err := Flags{Project: tc.project, Text: "x", Host: tc.host}.Request(cfg)
		if err != nil || req.Host != tc.want {
			t.Errorf("%s --host %q, pool %q: host %q (%v), want %q", tc.project, tc.host, tc.pool, req.Host, err, tc.want)
		}
	}
}

// TestRequestConfined: a request through a sandboxed task's door runs
// here, whatever the pool, and gives runner no command to run.
func TestRequestConfined(t *testing.T) {
	req, err := Flags{Project: "/srv/api", Text: "x", Confined: "t_parent01"}.Request(flagsConfig())
	if err != nil || req.Confined != "t_parent01" || req.Host != "" {
		t.Fatalf("confined request: %+v, %v", req, err)
	}
	if !reflect.DeepEqual(req.Settings.Notify, flagsConfig().NotifyCommand) {
		t.Errorf("notify %v: the config's command stays", req.Settings.Notify)
	}
	for _, f := range []Flags{
		{Project: ".", Text: "x", Confined: "t_parent01", Notify: []string{"sh"}},
		{Project: ".", Text: "x", Confined: "t_parent01", Host: "b"},
	} {
		if _, err := f.Request(flagsConfig()); !errors.Is(err, fault.ErrUsage) {
			t.Errorf("%+v: %v, want a usage error", f, err)
		}
	}
}

// TestRequestRefuses: a bad flag is a usage error that names it.
func TestRequestRefuses(t *testing.T) {
	for _, tc := range []struct {
		f     Flags
		words string
	}{
		{Flags{Awareness: "some"}, "--awareness"},
		{Flags{MaxTurns: -1}, "--max-turns -1"},
		{Flags{BudgetTokens: -5}, "--budget-tokens -5"},
		{Flags{BudgetUSD: -1}, "--budget-usd"},
		{Flags{BudgetUSD: math.NaN()}, "--budget-usd"},
		{Flags{BudgetUSD: math.Inf(1)}, "--budget-usd"},
		{Flags{LimitWait: -time.Minute}, "--limit-wait -1m0s"},
		{Flags{OnLimit: "retry"}, `--on-limit "retry": give wait or fail`},
	} {
		tc.f.Project, tc.f.Text = ".", "x"
		_, err := tc.f.Request(flagsConfig())
		if !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), tc.words) {
			t.Errorf("%+v: %v, want a usage error saying %q", tc.f, err, tc.words)
		}
	}
}
