// Explaining a detection: the rule that decided, where it is written, and
// what every other rule of the profile saw on the same screen.

package profile

import (
	"regexp"
	"slices"
)

// Explanation is what Explain reports about one screen: the detection
// (exactly what DetectPane returns), the rule that decided and the file
// and line it is written on, and every state rule of the profile with the
// lines it matched.
type Explanation struct {
	// Agent is the profile's name.
	Agent string `json:"agent"`
	// Detection is DetectPane's answer: the state, what decided (Field,
	// Rule, Pattern) and the line.
	Detection
	// Decided is the rule that decided; nil when no pattern did (Field
	// says what did: the pane's death, its foreground command, a blank
	// screen…).
	Decided *RuleMatch `json:"decided,omitempty"`
	// Bottom are the (1-based) numbers of the screen lines the rules
	// read: the last BottomLines non-blank lines.
	Bottom []int `json:"bottom"`
	// Rules are the profile's state rules in the order DetectPane tries
	// them: exited, trust, needs_input, starting, busy, ready, then —
	// for a ready screen — turn_open and turn_closed, error and
	// error_reset.
	Rules []RuleMatch `json:"rules"`
	// Sources are the files the profile was read from, in order.
	Sources []Origin `json:"sources,omitempty"`
}

// RuleMatch is one rule of a profile (one pattern) and what it matched on
// a screen.
type RuleMatch struct {
	// Rule is the pattern's key ("busy[1]", "trust[0].pattern").
	Rule string `json:"rule"`
	// Field is its list, and so the state it stands for ("busy").
	Field string `json:"field"`
	// Pattern is the regular expression.
	Pattern string `json:"pattern"`
	// Origin is the file and line it is written on.
	Origin Origin `json:"origin"`
	// Region says which lines the rule reads: "bottom" (the last
	// non-blank lines), "cursor" (the cursor's row, for needs_input with
	// NeedsInputAtCursor), "above ready" (turn_open, turn_closed: the
	// nearest such line above the ready line), "error lines" (the last
	// ErrorLines non-blank lines).
	Region string `json:"region"`
	// Lines are the lines of its region it matched, lowest last.
	Lines []MatchedLine `json:"lines,omitempty"`
	// Tried says DetectPane came to this rule before it decided; a rule
	// not tried had no say (a rule before it decided), matched or not.
	Tried bool `json:"tried"`
	// Decided says this rule decided the state.
	Decided bool `json:"decided,omitempty"`
}

// MatchedLine is a screen line a rule matched.
type MatchedLine struct {
	// N is its 1-based line number on the screen.
	N    int    `json:"n"`
	Text string `json:"text"`
}

// ruleStage is where a list's rules sit in DetectPane's order (ok false:
// not a state rule), and reached how far DetectPane got before what
// decided (Detection.Field): a rule whose stage is past it was not tried.
// Switches, not maps: a package-level map is built in the package's init,
// in every runner process.
func ruleStage(field string) (stage int, ok bool) {
	switch field {
	case "exited":
		return 1, true
	case "trust":
		return 2, true
	case "needs_input":
		return 3, true
	case "starting":
		return 4, true
	case "busy", "limit_busy":
		return 5, true
	case "undecided", "leave":
		return 6, true
	case "ready":
		return 7, true
	case "scrolled", "turn_open", "turn_closed":
		return 8, true
	case "limited", "error", "error_reset":
		return 9, true
	}
	return 0, false
}

// reached: see ruleStage.
func reached(field string) int {
	switch field {
	case "exited":
		return 1
	case "trust":
		return 2
	case "needs_input", "pane_alternate_on":
		return 3
	case "starting", "pane_current_command":
		return 4
	case "busy", "limit_busy":
		return 5
	case "undecided", "leave":
		return 6
	case "blank", "few_lines", "none":
		return 7
	case "turn_open":
		return 8
	case "limited", "error", "ready":
		return 9
	}
	return 0 // pane_dead, dead_banner, and what no rule decided
}

// stageOf is ruleStage's stage alone.
func stageOf(field string) int {
	st, _ := ruleStage(field)
	return st
}

// Explain classifies screen as Detect does and says why: see
// ExplainPane.
func (p *Profile) Explain(screen string) Explanation {
	return p.ExplainPane(screen, PaneInfo{})
}

// ExplainPane classifies screen with the pane's metadata as DetectPane
// does — its Detection is DetectPane's, unchanged — and adds the rule that
// decided with its origin (file and line), and every state rule of the
// profile with the lines of its region it matches, whether DetectPane
// tried it, and which one decided.
func (p *Profile) ExplainPane(screen string, info PaneInfo) Explanation {
	d := DetectPane(p, screen, info)
	if p.re == nil {
		q := *p
		if q.Compile() != nil {
			return Explanation{Agent: p.Name, Detection: d}
		}
		p = &q
	}
	c := p.patterns()
	lines := screenLines(screen)
	nonBlank := nonBlankIndexes(lines)
	bottom := lastN(nonBlank, p.BottomLines)
	errLines := lastN(nonBlank, p.ErrorLines)
	niLines, niRegion := bottom, "bottom"
	if p.NeedsInputAtCursor && info.CursorKnown {
		niLines, niRegion = nil, "cursor"
		if slices.Contains(bottom, info.CursorY) {
			niLines = []int{info.CursorY}
		}
	}
	// The ready rule that matched, and its line: the turn rules read
	// above it.
	readyRule, readyLine := "", -1
	for k, re := range c.ready {
		if i, ok := lowest(re, lines, bottom); ok {
			readyRule, readyLine = ruleKey("ready", k), i
			break
		}
	}
	turnLine := -1
	for i := readyLine - 1; readyLine >= 0 && i >= 0; i-- {
		if anyMatch(c.turnClosed, lines[i]) || anyMatch(c.turnOpen, lines[i]) {
			turnLine = i
			break
		}
	}

	ex := Explanation{Agent: p.Name, Detection: d, Sources: p.Sources()}
	for _, i := range bottom {
		ex.Bottom = append(ex.Bottom, i+1)
	}
	got := reached(d.Field)
	done := map[string]bool{} // lists whose first match was met: the rest of the list was not tried
	for _, r := range p.rules() {
		st, ok := ruleStage(r.field)
		if !ok {
			continue // not a state rule: volatile, the answer's, session_id, menu_cursor
		}
		m := RuleMatch{Rule: r.key, Field: r.field, Pattern: r.re.String(), Origin: p.Origin(r.key)}
		var idx []int
		switch r.field {
		case "needs_input":
			m.Region, idx = niRegion, niLines
		case "turn_open", "turn_closed":
			m.Region = "above ready"
			if turnLine >= 0 {
				idx = []int{turnLine}
			}
		case "limited", "error", "error_reset":
			m.Region, idx = "error lines", errLines
		default:
			m.Region, idx = "bottom", bottom
		}
		m.Lines = matchedLines(r.re, lines, idx)
		m.Tried = st <= got && !done[r.field] && (st != stageOf("turn_open") || len(c.turnOpen) > 0)
		m.Decided = r.key == d.Rule
		if m.Decided {
			dm := m
			ex.Decided = &dm
		}
		if (m.Decided || r.key == readyRule) && st != stageOf("error") {
			done[r.field] = true // lastError tries every error rule on each line
		}
		ex.Rules = append(ex.Rules, m)
	}
	return ex
}

// matchedLines returns the lines among idx that re matches.
func matchedLines(re *regexp.Regexp, lines []string, idx []int) []MatchedLine {
	var out []MatchedLine
	for _, i := range idx {
		if re.MatchString(lines[i]) {
			out = append(out, MatchedLine{N: i + 1, Text: lines[i]})
		}
	}
	return out
}
