package explain

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/profile"
)

// WriteDetection writes d for people: the state, what decided it, the
// line it decided on, and the dialogs and views the screen shows.
func WriteDetection(w io.Writer, d profile.Detection) {
	fmt.Fprintf(w, "%s\n", d.State)
	fmt.Fprintf(w, "  decided by: %s", d.Field)
	if d.Pattern != "" {
		fmt.Fprintf(w, " %q", d.Pattern)
	}
	fmt.Fprintln(w)
	if d.Line != "" {
		if d.LineNo > 0 {
			fmt.Fprintf(w, "  line %d: %s\n", d.LineNo, strings.TrimSpace(d.Line))
		} else {
			fmt.Fprintf(w, "  %s\n", d.Line)
		}
	}
	if d.ExitStatus != nil {
		fmt.Fprintf(w, "  exit status: %d\n", *d.ExitStatus)
	}
	writeLeaveKeys(w, d.LeaveKeys)
	if len(d.TrustKeys) > 0 {
		fmt.Fprintf(w, "  trust dialog, accepted by: %s\n", strings.Join(d.TrustKeys, " "))
	}
	if d.Question != "" {
		fmt.Fprintln(w, "  question:")
		for _, l := range strings.Split(d.Question, "\n") {
			if l == "" {
				fmt.Fprintln(w)
				continue
			}
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
}

// writeLeaveKeys says how runner leaves a view that hides the agent's
// state (a profile's leave rule), when the screen shows one.
func writeLeaveKeys(w io.Writer, keys []string) {
	if len(keys) > 0 {
		fmt.Fprintf(w, "  a view hides the agent's state: runner presses %s to leave it, then looks again\n", strings.Join(keys, " "))
	}
}

// WriteExplanation writes ex for people: the state and the rule that
// decided, then a table of every rule.
func WriteExplanation(w io.Writer, ex profile.Explanation) {
	fmt.Fprintf(w, "%s\n", ex.State)
	if r := ex.Decided; r != nil {
		fmt.Fprintf(w, "  decided by: %s '%s'", r.Rule, r.Pattern)
		if o := r.Origin.String(); o != "" {
			fmt.Fprintf(w, " at %s", o)
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintf(w, "  decided by: %s (%s)\n", ex.Field, fieldMeaning(ex.Field))
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
	writeLeaveKeys(w, ex.LeaveKeys)
	if ex.Question != "" {
		fmt.Fprintln(w, "  question:")
		for _, l := range strings.Split(ex.Question, "\n") {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
	writeRules(w, ex)
}

// writeRules writes the profile's sources and a table of its rules, in
// the order they are tried.
func writeRules(w io.Writer, ex profile.Explanation) {
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
// highest).
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

// fieldMeaning says what decided when no rule did. (A switch, not a
// package-level map: a map is built in the package's init, in every runner
// process.)
func fieldMeaning(field string) string {
	switch field {
	case "pane_dead":
		return "tmux says the pane is dead"
	case "dead_banner":
		return "tmux's \"Pane is dead\" line"
	case "pane_alternate_on":
		return "the alternate screen is on, and the profile reads that as waiting"
	case "pane_current_command":
		return "a command other than the profile's idle ones runs in the foreground"
	case "blank":
		return "nothing is drawn yet"
	case "few_lines":
		return "a few lines and no marker: the agent is still drawing"
	case "none":
		return "no rule matched the bottom of the screen"
	}
	return ""
}
