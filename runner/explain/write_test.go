package explain

import (
	"bytes"
	"strings"
	"testing"

	"github.com/runner-cli/runner/runner/profile"
)

// TestWriteDetection: the state, what decided and on which line, then
// what the screen shows beside (a view to leave, a trust dialog, the
// question with its blank lines kept).
func TestWriteDetection(t *testing.T) {
	st := 2
	var b bytes.Buffer
	WriteDetection(&b, profile.Detection{State: profile.StateNeedsInput, Field: "needs_input", Pattern: `\? $`, Line: "  Proceed? ", LineNo: 12,
		ExitStatus: &st, LeaveKeys: []string{"Escape"}, TrustKeys: []string{"1", "Enter"}, Question: "Proceed?\n\n1. Yes"})
	want := `needs_input
  decided by: needs_input "\\? $"
  line 12: Proceed?
  exit status: 2
  a view hides the agent's state: runner presses Escape to leave it, then looks again
  trust dialog, accepted by: 1 Enter
  question:
    Proceed?

    1. Yes
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	WriteDetection(&b, profile.Detection{State: profile.StateUnknown, Field: "none", Line: "(no line)"})
	if b.String() != "unknown\n  decided by: none\n  (no line)\n" {
		t.Errorf("no pattern: %q", b.String())
	}
}

// TestWriteExplanation explains a real profile's reading of a screen:
// the rule that decided with its origin, and the table of rules.
func TestWriteExplanation(t *testing.T) {
	p, err := profile.BuiltinProfile("sim")
	if err != nil {
		t.Fatal(err)
	}
	ex := p.ExplainPane("sim agent\n\n> ", profile.PaneInfo{})
	var b bytes.Buffer
	WriteExplanation(&b, ex)
	out := b.String()
	for _, want := range []string{string(ex.State) + "\n", "profile sim: ", "  RULE", "RESULT", "ORIGIN"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if ex.Decided != nil && !strings.Contains(out, "decided by: "+ex.Decided.Rule) {
		t.Errorf("no deciding rule in\n%s", out)
	}
	b.Reset()
	WriteExplanation(&b, profile.Explanation{Agent: "x", Detection: profile.Detection{State: profile.StateStarting, Field: "blank"}})
	if !strings.Contains(b.String(), "decided by: blank (nothing is drawn yet)") || !strings.Contains(b.String(), "the screen is blank") {
		t.Errorf("blank screen:\n%s", b.String())
	}
}

// TestRuleColumns: the RESULT and LINES cells of the rules table.
func TestRuleColumns(t *testing.T) {
	lines := func(ns ...int) []profile.MatchedLine {
		var out []profile.MatchedLine
		for _, n := range ns {
			out = append(out, profile.MatchedLine{N: n})
		}
		return out
	}
	for _, c := range []struct {
		r            profile.RuleMatch
		result, nums string
	}{
		{profile.RuleMatch{Decided: true, Tried: true, Lines: lines(3)}, "decided", "3"},
		{profile.RuleMatch{Tried: true, Lines: lines(1, 2)}, "matched", "1,2"},
		{profile.RuleMatch{Tried: true}, "no match", "-"},
		{profile.RuleMatch{Lines: lines(1, 2, 3, 4, 5)}, "matches, not tried", "…,2,3,4,5"},
		{profile.RuleMatch{}, "not tried", "-"},
	} {
		if got := ruleResult(c.r); got != c.result {
			t.Errorf("%+v: result %q, want %q", c.r, got, c.result)
		}
		if got := matchedNumbers(c.r.Lines); got != c.nums {
			t.Errorf("%+v: lines %q, want %q", c.r, got, c.nums)
		}
	}
	if got := originShort(profile.Origin{}); got != "-" {
		t.Errorf("no origin: %q", got)
	}
}
