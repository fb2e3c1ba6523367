package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/tailfile"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/spend"
	"github.com/runner-cli/runner/state"
)

func (a *app) newAgentsExplainCmd() *cobra.Command {
	var opts agentsExplainOptions
	cmd := &cobra.Command{
		Use:   "explain (--screen SCREEN --agent NAME | --pane ID | --task ID)",
		Short: "Say why an agent profile reads a captured screen as it does: the rule, its file and line",
		Long: `Classify a captured screen (tmux capture-pane -p, with or without -e; '-' reads
stdin) with an agent profile, as 'runner agents detect' does, and say why: the
rule (pattern) that decided the state, the file and line it is written on (a
built-in agent file, yours in <config dir>/agents, or the config file), the
screen lines it matched, and every other state rule of the profile in the order
they are tried — exited, trust, needs_input, starting, busy, ready, then for a
ready screen turn_open/turn_closed and error/error_reset — with the lines each
matches and whether it was tried (a rule after the one that decided had no say).

--pane ID captures a live pane on the --socket server (and, when it is a task's,
uses the task's agent); --task ID captures the task's pane, here or on its host.
For a task, the output also names the last hook event in its events file (the
agent's own word, which ends a turn before any screen rule does) and how long
ago it came.

The pane flags give what tmux would say besides the text, as for 'agents detect'
(for a live pane, they override what tmux says).`,
		Example: `  runner agents explain --task t_abc123
  runner agents explain --screen claude-screen.txt --agent claude --json`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.paneInfo.changed(cmd)
			return a.runAgentsExplain(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.screen, "screen", "", "the captured screen (`SCREEN` file, or - for stdin)")
	f.StringVar(&opts.agent, "agent", "", "the agent profile (`NAME`; for a task's pane, the task's agent by default)")
	f.StringVar(&opts.pane, "pane", "", "capture this live pane (`ID`, e.g. %3) on the --socket server")
	f.StringVar(&opts.task, "task", "", "capture this task's pane (`ID` or unique prefix), here or on its host")
	a.jsonFlag(cmd, &opts.asJSON, "print as JSON: the detection (state, field, rule, pattern, line, line_no, question…), decided, bottom, rules [{rule, field, pattern, origin: {file, line, builtin}, region, lines: [{n, text}], tried, decided}], sources")
	opts.paneInfo.add(cmd)
	return cmd
}

// agentsExplainOptions are the arguments and flags of `runner agents explain`.
type agentsExplainOptions struct {
	screen   string
	pane     string
	task     string
	agent    string
	asJSON   bool
	paneInfo paneInfoFlags
}

func (a *app) runAgentsExplain(ctx context.Context, opts agentsExplainOptions) error {
	if opts.asJSON {
		a.jsonErrors = true
	}
	given := 0
	for _, v := range []string{opts.screen, opts.pane, opts.task} {
		if v != "" {
			given++
		}
	}
	if given != 1 {
		return fault.Usagef("agents explain: give one of --screen SCREEN (a capture-pane text file, or - for stdin), --pane ID (a live pane) or --task ID")
	}
	out := explainOutput{Pane: opts.pane}
	var screen string
	var info profile.PaneInfo
	var cfg *config.Config
	var err error
	if opts.screen != "" {
		if opts.agent == "" {
			return fault.Usagef("agents explain: --agent is required with --screen (see 'runner agents')")
		}
		if screen, err = a.readScreen("agents explain", opts.screen); err != nil {
			return err
		}
		if cfg, _, err = config.Load(a.getenv); err != nil {
			return err
		}
	} else if screen, info, cfg, err = a.explainCapture(ctx, &opts, &out); err != nil {
		return err
	}
	p, err := cfg.Profile(opts.agent)
	if err != nil {
		return err
	}
	if err := opts.paneInfo.apply("agents explain", &info); err != nil {
		return err
	}
	out.Explanation = p.ExplainPane(screen, info)
	if opts.asJSON {
		return a.printJSON(out)
	}
	if out.Task != "" {
		fmt.Fprintf(a.out, "task %s, pane %s\n", out.Task, out.Pane)
	}
	printExplanation(a.out, out.Explanation)
	if out.Task != "" {
		fmt.Fprintf(a.out, "last hook event: %s\n", hookEventLine(out.LastHook, clock.Now()))
	}
	return nil
}

// explainOutput is `agents explain`'s answer: the explanation, and for a
// live pane which it was, the task it belongs to and the task's last hook
// event.
type explainOutput struct {
	profile.Explanation
	Pane     string         `json:"pane,omitempty"`
	Task     string         `json:"task,omitempty"`
	LastHook *hookEventInfo `json:"last_hook_event,omitempty"`
}

// hookEventInfo is a task's last hook event, as explain shows it.
type hookEventInfo struct {
	Name    string    `json:"name"`
	Time    time.Time `json:"time,omitzero"`
	Stop    bool      `json:"stop"`
	Session string    `json:"session,omitempty"`
	Answer  string    `json:"answer,omitempty"`
}

// explainCapture captures the pane of opts.pane or opts.task, sets the
// agent (the task's, unless --agent says) and fills in the task and its
// last hook event; cfg is the config it loaded.
func (a *app) explainCapture(ctx context.Context, opts *agentsExplainOptions, out *explainOutput) (screen string, info profile.PaneInfo, cfg *config.Config, err error) {
	env, cfg, err := a.runnerEnv(false)
	if err != nil {
		return "", profile.PaneInfo{}, nil, err
	}
	var t *state.Task
	if opts.task != "" {
		if t, err = runner.GetTask(ctx, env, opts.task); err != nil {
			return "", profile.PaneInfo{}, nil, err
		}
		if t.Tmux.Pane == "" {
			return "", profile.PaneInfo{}, nil, fault.Usagef("agents explain: task %s has no pane yet (%s)", t.ID, t.Status)
		}
	} else if st, err := env.Store.Read(ctx); err == nil {
		t = taskOfPane(st, env.TC.Socket(), opts.pane)
	}
	tc := env.TC
	if t != nil {
		if tc, err = env.PaneClient(ctx, t); err != nil {
			return "", profile.PaneInfo{}, nil, err
		}
		out.Task, out.Pane = t.ID, t.Tmux.Pane
		if opts.agent == "" {
			opts.agent = t.Agent
		}
		out.LastHook = lastHookEvent(env.Store.TaskFile(state.FileEvents, t.ID))
	}
	if opts.agent == "" {
		return "", profile.PaneInfo{}, nil, fault.Usagef("agents explain: pane %s is no task's: give --agent NAME", opts.pane)
	}
	screen, info, err = capturePane(ctx, tc, out.Pane)
	return screen, info, cfg, err
}

// taskOfPane is the task whose pane on this machine's server socket is
// pane (the newest, a pane id being reused after a server restart), or
// nil.
func taskOfPane(st *state.State, socket, pane string) *state.Task {
	var found *state.Task
	for _, t := range st.Tasks {
		if t.Tmux.Pane == pane && t.Tmux.Host == "" && t.Tmux.Socket == socket && (found == nil || t.Created.After(found.Created)) {
			found = t
		}
	}
	return found
}

// lastHookEvent is the last event line of a task's events file (nil:
// none, or no file).
func lastHookEvent(path string) *hookEventInfo {
	tail, _ := tailfile.Bytes(path, 64<<10)
	lines := strings.Split(textutil.LastLines(string(tail), 20), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if ev, ok := spend.ReadHookEvent(lines[i]); ok {
			return &hookEventInfo{Name: ev.Name, Time: ev.Time, Stop: ev.Stop, Session: ev.Session, Answer: textutil.Headline(ev.Answer, 120)}
		}
	}
	return nil
}

// hookEventLine says ev in a line: its name, whether it ends a turn, and
// when.
func hookEventLine(ev *hookEventInfo, now time.Time) string {
	if ev == nil {
		return "none (the screen decides the turn's end)"
	}
	s := ev.Name
	if ev.Stop {
		s += " (a turn's end)"
	}
	if !ev.Time.IsZero() {
		s += ", " + textutil.Age(now, ev.Time) + " ago"
	}
	if ev.Session != "" {
		s += ", session " + ev.Session
	}
	return s
}

// printExplanation writes ex for people: the state and the rule that
// decided, then a table of every rule.
func printExplanation(w io.Writer, ex profile.Explanation) {
	fmt.Fprintf(w, "%s\n", ex.State)
	if r := ex.Decided; r != nil {
		fmt.Fprintf(w, "  decided by: %s '%s'", r.Rule, r.Pattern)
		if o := r.Origin.String(); o != "" {
			fmt.Fprintf(w, " at %s", o)
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintf(w, "  decided by: %s (%s)\n", ex.Field, fieldMeaning[ex.Field])
	}
	if ex.Line != "" {
		if ex.LineNo > 0 {
			fmt.Fprintf(w, "  line %d: %s\n", ex.LineNo, strings.TrimSpace(ex.Line))
		} else {
			fmt.Fprintf(w, "  %s\n", ex.Line)
		}
	}
	if ex.ExitStatus != nil {
		fmt.Fprintf(w, "  exit status: %d\n", *ex.ExitStatus)
	}
	printLeaveKeys(w, ex.LeaveKeys)
	if ex.Question != "" {
		fmt.Fprintln(w, "  question:")
		for _, l := range strings.Split(ex.Question, "\n") {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
	var src []string
	for _, s := range ex.Sources {
		src = append(src, s.String())
	}
	if len(src) > 0 {
		fmt.Fprintf(w, "profile %s: %s\n", ex.Agent, strings.Join(src, ", "))
	}
	if n := len(ex.Bottom); n > 0 {
		fmt.Fprintf(w, "rules read lines %d-%d (the bottom %d non-blank lines); in the order they are tried:\n", ex.Bottom[0], ex.Bottom[n-1], n)
	} else {
		fmt.Fprintln(w, "the screen is blank; the rules, in the order they are tried:")
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  RULE\tRESULT\tLINES\tPATTERN\tORIGIN")
	for _, r := range ex.Rules {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", r.Rule, ruleResult(r), matchedNumbers(r.Lines),
			textutil.ClipRunes(r.Pattern, 48), originShort(r.Origin))
	}
	tw.Flush()
}

// originShort is FILE:LINE ("-" when unknown; the profile's sources say
// which files are built in).
func originShort(o profile.Origin) string {
	o.Builtin = false
	return textutil.OrDash(o.String())
}

// ruleResult says in a word or two what a rule did.
func ruleResult(r profile.RuleMatch) string {
	switch {
	case r.Decided:
		return "decided"
	case r.Tried && len(r.Lines) > 0:
		return "matched"
	case r.Tried:
		return "no match"
	case len(r.Lines) > 0:
		return "matches, not tried"
	}
	return "not tried"
}

// matchedNumbers lists the line numbers a rule matched (at most 4, the
// lowest).
func matchedNumbers(ls []profile.MatchedLine) string {
	if len(ls) == 0 {
		return "-"
	}
	var out []string
	start := max(0, len(ls)-4)
	if start > 0 {
		out = append(out, "…")
	}
	for _, l := range ls[start:] {
		out = append(out, strconv.Itoa(l.N))
	}
	return strings.Join(out, ",")
}

// fieldMeaning says what decided when no rule did.
var fieldMeaning = map[string]string{
	"pane_dead":            "tmux says the pane is dead",
	"dead_banner":          "tmux's \"Pane is dead\" line",
	"pane_alternate_on":    "the alternate screen is on, and the profile reads that as waiting",
	"pane_current_command": "a command other than the profile's idle ones runs in the foreground",
	"blank":                "nothing is drawn yet",
	"few_lines":            "a few lines and no marker: the agent is still drawing",
	"none":                 "no rule matched the bottom of the screen",
}
