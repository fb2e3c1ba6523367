// Package plan is a dispatch request made one plan, once: the agent's
// profile and command line, the project's place and policy, whether the
// task gets a worktree and a sandbox, its lineage, the tasks it waits for,
// its budgets, each resolved from the flags over the config's policy and
// checked, before anything is recorded. What follows a dispatch (its
// record, its start, its supervisor) reads the Plan; nothing resolves a
// flag again.
//
// It reads no state file and reaches no host itself: package runner reads
// the state and gives it (Make), and gives a Machine for what the plan
// asks of the machine where the task runs (Check: its git, its sandbox,
// the agent's CLI there).
package plan

import (
	"strings"

	"github.com/runner-cli/runner/runner/breadth"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/projects"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/tmuxctl"
)

// Request is one `runner dispatch`, as asked: the flags over the config.
type Request struct {
	Project string // a registered name or a path
	// Host is the registered host a path Project is on (dispatch --host).
	Host      string
	Text      string
	Agent     string
	Model     string
	AgentArgs []string
	// Permissions is --permissions (profile.PermissionsModes); "" takes
	// PermissionsDefault (the config's permissions), else runner's
	// default (see profile.Permissions).
	Permissions, PermissionsDefault string
	RequireSnapshot                 bool
	Exclusive                       bool
	// Worktree asks for a git worktree of its own, or not (dispatch
	// --worktree[=false]); nil: the Policy's Isolation decides (Plan.Worktree).
	Worktree *bool
	// From starts the task from another worktree task's branch; it must
	// be one of After (it starts once that task is done). It implies
	// Worktree.
	From string
	// Policy is the config's policy for a project's tasks (its isolation,
	// budgets, worktree set-up, sandbox), asked once the project is
	// resolved; nil: none.
	Policy   func(project string) config.Policy
	WaitLock bool
	Source   string // "user", "cron"; a parent task id is filled in from the pane environment
	Size     tmuxctl.Size
	UseHook  bool // install the agent's turn-end hook when its profile has one
	// MaxLevel is the deepest level a task may have (config max_level); a
	// task at that level cannot dispatch children. 0 means no limit.
	MaxLevel int
	// Tree bounds the breadth of the tree a child task joins (config
	// max_tree_tasks, max_tree_dispatches_per_minute).
	Tree breadth.Bounds
	// After holds references (ids or unique prefixes, comma-separated
	// lists allowed) of tasks that must be done before this one starts.
	After    []string
	Settings settings.Run
	// Sandbox asks for the agent in a sandbox, or not (dispatch
	// --sandbox[=false]); nil: the Policy's Sandbox decides (Plan.Sandbox).
	// SandboxPaths are the config's sandbox_paths.
	Sandbox *bool
	// SandboxHome is the CLI directories' mode of a sandboxed task
	// (settings.SandboxHomeTask: a copy for the task); "" shares them.
	SandboxHome string
	// Confined is the sandboxed task that asks, through its door: the
	// new task is its child, sandboxed whatever the flags say, in its
	// folder (or below), on this machine.
	Confined     string
	SandboxPaths []string
	// Group is the group the task is a candidate of, and Snapshot the
	// group's snapshot it starts from (settings.Start.Snapshot).
	Group, Snapshot string
}

// Plan is a dispatch resolved: what every step after reads.
type Plan struct {
	Req     Request          // as asked (the text, the agent's extra arguments, the group)
	Profile *profile.Profile // the agent's
	// Argv is the agent's command line: as the profile makes it (New),
	// then resolved for its site and with its asking mode (SetArgv).
	Argv []string
	Mode string   // the --permissions mode it runs in
	Env  []string // what the asking mode adds to the pane's environment

	projects.Place               // where it works
	Policy         config.Policy // the config's policy for its project, asked once
	Lineage                      // its parent, level and source
	After          []string      // the tasks it waits for (--after), resolved
	From           string        // the task whose branch it starts from (--from)

	Worktree    bool                  // a worktree of its own: --worktree, --from, else the policy's isolation
	Setup       *config.WorktreeSetup // the worktree's set-up, with Worktree
	Sandbox     bool                  // sandboxed: --sandbox, a door's child, else the policy's
	SandboxHome string                // "", shared or task
	// Within is the folder of the sandboxed task that asks (Confined),
	// resolved: every start of the child checks its folder against it.
	Within string
	// Checked is a sandboxed task's place as checked here, for every start.
	Checked *settings.Checked

	// Settings are the run settings as recorded: the flags over the
	// config, the budgets the flags name none of from the policy, and
	// Start (Finish).
	Settings settings.Run
}

// Lineage is where a new task sits: its parent, level and source.
type Lineage struct {
	Parent string
	Level  int
	Source string
}

// New checks a request's text, agent and options and starts its plan: the
// agent's profile among profiles, its command line (without the asking
// mode, which needs the site: see SetArgv) and its permissions mode. A
// bad request is a usage error naming what to change.
func New(req Request, profiles []*profile.Profile) (*Plan, error) {
	if strings.TrimSpace(req.Text) == "" {
		return nil, fault.Usagef("the task is empty: give TASK, or --file F / --file - with the text")
	}
	prof, err := profile.FindProfile(profiles, req.Agent)
	if err != nil {
		return nil, fault.Usagef("%v", err)
	}
	if err := prof.CheckTaskSize(req.Text); err != nil {
		return nil, err
	}
	mode, err := profile.Permissions(prof, req.Permissions, req.PermissionsDefault)
	if err != nil {
		return nil, err
	}
	argv, err := prof.Argv(profile.LaunchOptions{Model: req.Model, Permissions: mode, ExtraArgs: req.AgentArgs})
	if err != nil {
		return nil, err
	}
	if _, err := config.CompileApproveRules("--approve-rule", req.Settings.ApproveRules); err != nil {
		return nil, fault.Usagef("%v", err)
	}
	if !settings.ValidSandboxHome(req.SandboxHome) {
		return nil, fault.Usagef("--sandbox-home %q: give shared or task", req.SandboxHome)
	}
	return &Plan{Req: req, Profile: prof, Argv: argv, Mode: mode,
		SandboxHome: req.SandboxHome, Settings: req.Settings}, nil
}

// Resolve places the plan (its project resolved) and settles, from the
// flags over the project's policy (asked once, here), its worktree, its
// sandbox and its budgets. A child asked through a door (Confine) stays
// sandboxed.
func (p *Plan) Resolve(place projects.Place) {
	p.Place = place
	if p.Req.Policy != nil {
		p.Policy = p.Req.Policy(place.Project)
	}
	p.Worktree = p.Policy.Isolation == "worktree"
	if p.Req.Worktree != nil {
		p.Worktree = *p.Req.Worktree
	}
	p.Setup = p.Policy.Setup
	switch {
	case p.Req.Confined != "":
		p.Sandbox = true // a door's child, whatever was asked (Confine)
	case p.Req.Sandbox != nil:
		p.Sandbox = *p.Req.Sandbox
	default:
		p.Sandbox = p.Policy.Sandbox
	}
	if p.Settings.MaxTurns == 0 {
		p.Settings.MaxTurns = p.Policy.MaxTurns
	}
	if p.Settings.BudgetTokens == 0 {
		p.Settings.BudgetTokens = p.Policy.BudgetTokens
	}
	if p.Settings.BudgetUSD == 0 {
		p.Settings.BudgetUSD = p.Policy.BudgetUSD
	}
}

// Confine makes the plan the child of the sandboxed task that asks
// (Req.Confined): in dir, its folder or below as resolved (recorded so:
// no link left in it to swap after the check), checked against within,
// the parent's folder, at every start; sandboxed, with a copy of the
// CLI's directories when the parent has one (no weaker than its parent).
func (p *Plan) Confine(dir, within string, parentCopies bool) {
	p.Dir, p.Within, p.Sandbox = dir, within, true
	if parentCopies {
		p.SandboxHome = settings.SandboxHomeTask
	}
}

// Wait sets the tasks the plan waits for (--after, resolved) and the one
// whose branch it starts from (--from: a worktree of its own).
func (p *Plan) Wait(after []string, from string) {
	p.After, p.From = after, from
	if from != "" {
		p.Worktree = true
	}
}

// CheckSandboxHome refuses a home copy (--sandbox-home task) where runner
// cannot make one yet: on a host or a pool.
func (p *Plan) CheckSandboxHome() error {
	if p.Sandbox && (p.Host != "" || p.Pool != "") && p.SandboxHome == settings.SandboxHomeTask {
		return fault.Usagef("--sandbox-home task: not on a host yet (run it here, or with the shared home there)")
	}
	return nil
}

// Finish sets the agent's command line for its site (argv, with the
// asking mode's environment env) and records how it starts in the
// settings (Settings.Start): the plan is then whole.
func (p *Plan) Finish(argv, env []string) {
	p.Argv, p.Env = argv, env
	req := p.Req
	spec := &settings.Start{Argv: argv, Env: env, Size: req.Size, UseHook: req.UseHook, RequireSnapshot: req.RequireSnapshot,
		Exclusive: req.Exclusive, WaitLock: req.WaitLock, Worktree: p.Worktree, Snapshot: req.Snapshot}
	if p.Worktree {
		spec.Setup, spec.From = p.Setup, p.From
	}
	if p.Sandbox {
		spec.Sandbox = &settings.Sandbox{Paths: req.SandboxPaths, Checked: p.Checked}
		if p.SandboxHome == settings.SandboxHomeTask {
			spec.Sandbox.Home = settings.SandboxHomeTask
		}
	}
	p.Settings.Start = spec
}
