package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/exit"
	"github.com/runner-cli/runner/runner/profile"
)

func (a *app) newAgentsExplainCmd() *cobra.Command {
	var opts agentsExplainOptions
	cmd := &cobra.Command{
		Use:   "explain --screen SCREEN --agent NAME",
		Short: "Say why an agent profile reads a captured screen as it does: the rule, its file and line",
		Long: `Classify a captured screen (tmux capture-pane -p, with or without -e; '-' reads
stdin) with an agent profile, as 'runner agents detect' does, and say why: the
rule (pattern) that decided the state, the file and line it is written on (a
built-in agent file, yours in <config dir>/agents, or the config file), the
screen lines it matched, and every other state rule of the profile in the order
they are tried — exited, trust, needs_input, starting, busy, ready, then for a
ready screen turn_open/turn_closed and error/error_reset — with the lines each
matches and whether it was tried (a rule after the one that decided had no say).

The pane flags give what tmux would say besides the text, as for 'agents detect'.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.paneInfo.changed(cmd)
			return a.runAgentsExplain(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.screen, "screen", "", "the captured screen (`SCREEN` file, or - for stdin)")
	f.StringVar(&opts.agent, "agent", "", "the agent profile (`NAME`)")
	a.jsonFlag(cmd, &opts.asJSON, "print as JSON: the detection (state, field, rule, pattern, line, line_no, question…), decided, bottom, rules [{rule, field, pattern, origin: {file, line, builtin}, region, lines: [{n, text}], tried, decided}], sources")
	opts.paneInfo.add(cmd)
	return cmd
}

// agentsExplainOptions are the arguments and flags of `runner agents explain`.
type agentsExplainOptions struct {
	screen   string
	agent    string
	asJSON   bool
	paneInfo paneInfoFlags
}

func (a *app) runAgentsExplain(ctx context.Context, opts agentsExplainOptions) error {
	if opts.screen == "" {
		return exit.Usagef("agents explain: give --screen SCREEN (a capture-pane text file, or - for stdin)")
	}
	if opts.agent == "" {
		return exit.Usagef("agents explain: --agent is required (see 'runner agents')")
	}
	cfg, _, err := config.Load(a.getenv)
	if err != nil {
		return err
	}
	p, err := cfg.Profile(opts.agent)
	if err != nil {
		return err
	}
	screen, err := a.readScreen("agents explain", opts.screen)
	if err != nil {
		return err
	}
	var info profile.PaneInfo
	if err := opts.paneInfo.apply("agents explain", &info); err != nil {
		return err
	}
	ex := p.ExplainPane(screen, info)
	if opts.asJSON {
		return a.printJSON(ex)
	}
	printExplanation(a.out, ex)
	return nil
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
