package mcpserver

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// The tools' arguments. Their names follow the CLI: a positional argument
// by the name its usage gives it (project, task, id, option), a flag by
// its long name with '_' for '-' (--budget-usd: budget_usd). A flag that
// selects runner's own resources or runs a command (--socket, --notify,
// --source) has no argument: the server's runner decides those.

// DispatchArgs are runner_dispatch's arguments (runner dispatch --detach).
type DispatchArgs struct {
	Project         string   `json:"project" jsonschema:"a registered project's name or a directory (absolute: the server's folder is not yours)"`
	Task            string   `json:"task" jsonschema:"the task's text, as the agent gets it"`
	Agent           string   `json:"agent,omitempty" jsonschema:"agent profile (default: the config's default_agent)"`
	Model           string   `json:"model,omitempty" jsonschema:"model for the agent (aliases from the config, e.g. sonnet)"`
	After           []string `json:"after,omitempty" jsonschema:"start only when these tasks are done (ids)"`
	Worktree        bool     `json:"worktree,omitempty" jsonschema:"run in a git worktree of its own, on branch runner/ID"`
	From            string   `json:"from,omitempty" jsonschema:"start from worktree task ID's branch (needs after: [ID])"`
	Commit          bool     `json:"commit,omitempty" jsonschema:"commit what the task changed when it is done"`
	CommitBranch    bool     `json:"commit_branch,omitempty" jsonschema:"with commit, commit on a new branch runner/ID"`
	Exclusive       bool     `json:"exclusive,omitempty" jsonschema:"take the project's lock (fails, exit 5, if another exclusive task holds it)"`
	Timeout         string   `json:"timeout,omitempty" jsonschema:"give up on the task this long after its text was delivered (a duration: 30m, 2h)"`
	Permissions     string   `json:"permissions,omitempty" jsonschema:"ask or auto (see runner agents show NAME)"`
	ApproveRule     []string `json:"approve_rule,omitempty" jsonschema:"answer yes to an approval dialog whose text matches one of these regexes"`
	YesTrust        bool     `json:"yes_trust,omitempty" jsonschema:"accept the agent's folder-trust dialog"`
	Sandbox         bool     `json:"sandbox,omitempty" jsonschema:"run the agent in a sandbox"`
	BudgetTokens    int64    `json:"budget_tokens,omitempty" jsonschema:"end the task failed once it and its child tasks used this many tokens"`
	BudgetUSD       float64  `json:"budget_usd,omitempty" jsonschema:"end the task failed once it and its child tasks cost this many dollars"`
	MaxTurns        int      `json:"max_turns,omitempty" jsonschema:"end the task failed rather than deliver a turn past this many"`
	OnLimit         string   `json:"on_limit,omitempty" jsonschema:"when the agent's usage or rate limit ends a turn: fail or wait"`
	Awareness       string   `json:"awareness,omitempty" jsonschema:"tell the agent about other tasks: project, all or off (default: the config's)"`
	Host            string   `json:"host,omitempty" jsonschema:"run on this registered host (runner host add)"`
	RequireSnapshot bool     `json:"require_snapshot,omitempty" jsonschema:"refuse to run when no git snapshot can be taken"`
}

// argv is runner dispatch's argv; the task goes on standard input (-f -),
// never into a flag or the process list.
func (a DispatchArgs) argv() ([]string, string, error) {
	if a.Project == "" || a.Task == "" {
		return nil, "", fmt.Errorf("project and task are required")
	}
	argv := []string{"dispatch", "--detach", "--json", "--file", "-"}
	str := func(flag, v string) {
		if v != "" {
			argv = append(argv, "--"+flag, v)
		}
	}
	flag := func(name string, on bool) {
		if on {
			argv = append(argv, "--"+name)
		}
	}
	str("agent", a.Agent)
	str("model", a.Model)
	for _, id := range a.After {
		str("after", id)
	}
	flag("worktree", a.Worktree)
	str("from", a.From)
	flag("commit", a.Commit)
	flag("commit-branch", a.CommitBranch)
	flag("exclusive", a.Exclusive)
	if a.Timeout != "" {
		if _, err := time.ParseDuration(a.Timeout); err != nil {
			return nil, "", fmt.Errorf("timeout %q: a duration such as 30m or 2h", a.Timeout)
		}
		str("timeout", a.Timeout)
	}
	str("permissions", a.Permissions)
	for _, r := range a.ApproveRule {
		str("approve-rule", r)
	}
	flag("yes-trust", a.YesTrust)
	flag("sandbox", a.Sandbox)
	if a.BudgetTokens > 0 {
		str("budget-tokens", strconv.FormatInt(a.BudgetTokens, 10))
	}
	if a.BudgetUSD > 0 {
		str("budget-usd", strconv.FormatFloat(a.BudgetUSD, 'f', -1, 64))
	}
	if a.MaxTurns > 0 {
		str("max-turns", strconv.Itoa(a.MaxTurns))
	}
	str("on-limit", a.OnLimit)
	str("awareness", a.Awareness)
	str("host", a.Host)
	flag("require-snapshot", a.RequireSnapshot)
	return append(argv, "--", a.Project), a.Task, nil
}

// ListArgs are runner_list's (runner ps --all --json).
type ListArgs struct {
	Project string `json:"project,omitempty" jsonschema:"only tasks of this project: a registered name or a directory"`
	Active  bool   `json:"active,omitempty" jsonschema:"only tasks still at work or waiting (runner ps without --all)"`
}

func (a ListArgs) argv() []string {
	argv := []string{"ps", "--json"}
	if !a.Active {
		argv = append(argv, "--all")
	}
	if a.Project != "" {
		argv = append(argv, "--project", a.Project)
	}
	return argv
}

// IDArgs name a task (runner_status, runner_cancel).
type IDArgs struct {
	ID string `json:"id" jsonschema:"the task's id (t_…) or a unique prefix"`
}

// WaitArgs are runner_wait's (runner wait --json --timeout T ID).
type WaitArgs struct {
	ID      string `json:"id" jsonschema:"the task's id (t_…) or a unique prefix"`
	Timeout string `json:"timeout,omitempty" jsonschema:"give up waiting after this long (a duration: 90s, 5m; default 60s, at most 10m); a wait that gives up is an error whose text says so, and the task goes on"`
	Input   bool   `json:"input,omitempty" jsonschema:"also end the wait when the task needs input"`
}

// Wait's bounds: a tool call is not held open longer than MaxWait.
const (
	DefaultWait = 60 * time.Second
	MaxWait     = 10 * time.Minute
)

func (a WaitArgs) argv() ([]string, error) {
	d := DefaultWait
	if a.Timeout != "" {
		var err error
		if d, err = time.ParseDuration(a.Timeout); err != nil || d <= 0 {
			return nil, fmt.Errorf("timeout %q: a positive duration such as 90s or 5m", a.Timeout)
		}
	}
	d = min(d, MaxWait)
	argv := []string{"wait", "--json", "--timeout", d.String()}
	if a.Input {
		argv = append(argv, "--input")
	}
	return append(argv, "--", a.ID), nil
}

// SendArgs are runner_send's (runner send --detach --json, the text on
// standard input).
type SendArgs struct {
	ID   string `json:"id" jsonschema:"the task's id (t_…) or a unique prefix"`
	Text string `json:"text" jsonschema:"the follow-up text for the task's agent"`
}

func (a SendArgs) argv() ([]string, string, error) {
	if a.Text == "" {
		return nil, "", fmt.Errorf("text is required")
	}
	return []string{"send", "--detach", "--json", "--file", "-", "--", a.ID}, a.Text, nil
}

// AnswerArgs are runner_answer's (runner answer ID OPTION --digest D --op
// OP --by mcp --json): the option is pressed only while the task's
// screen still shows the dialog whose digest is D.
type AnswerArgs struct {
	ID     string `json:"id" jsonschema:"the task's id (t_…) or a unique prefix"`
	Option string `json:"option" jsonschema:"the key of the option to press, as the dialog's options give it (1, 2, y …)"`
	Digest string `json:"digest" jsonschema:"the digest of the dialog the answer is for, as runner_status gives it: nothing is pressed if the screen shows another"`
	Op     string `json:"op,omitempty" jsonschema:"an operation id: the same op again returns the first receipt and presses nothing (default: a new one)"`
}

func (a AnswerArgs) argv(newOp func() string) []string {
	op := a.Op
	if op == "" {
		op = newOp()
	}
	return []string{"answer", "--digest", a.Digest, "--op", op, "--by", "mcp", "--json", "--", a.ID, a.Option}
}

// EventsArgs are runner_events' (runner events --json --after CURSOR, a
// page of at most limit events).
type EventsArgs struct {
	After   uint64 `json:"after,omitempty" jsonschema:"only events after this cursor (the next of the last page; 0: from the oldest kept)"`
	Limit   int    `json:"limit,omitempty" jsonschema:"at most this many events (default 100, at most 1000)"`
	Task    string `json:"task,omitempty" jsonschema:"only events of this task"`
	Project string `json:"project,omitempty" jsonschema:"only events of this project"`
}

// Events' page bounds.
const (
	DefaultEvents = 100
	MaxEvents     = 1000
)

func (a EventsArgs) argv() ([]string, int) {
	limit := a.Limit
	if limit <= 0 {
		limit = DefaultEvents
	}
	limit = min(limit, MaxEvents)
	argv := []string{"events", "--json"}
	if a.After > 0 {
		argv = append(argv, "--after", strconv.FormatUint(a.After, 10))
	}
	if a.Task != "" {
		argv = append(argv, "--task", a.Task)
	}
	if a.Project != "" {
		argv = append(argv, "--project", a.Project)
	}
	return argv, limit
}

// EventsPage is runner_events' result: the events as runner events --json
// prints them, and the cursor to ask after for the next page.
type EventsPage struct {
	Events []json.RawMessage `json:"events"`
	Next   uint64            `json:"next"`
	More   bool              `json:"more"`
}
