package profile

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/runner-cli/runner/internal/textutil"
)

// State is what an agent's pane shows, as seen by Detect.
type State string

// The states Detect reports.
const (
	StateReady      State = "ready"       // idle, would accept a prompt
	StateBusy       State = "busy"        // working, retrying, running a tool
	StateNeedsInput State = "needs_input" // blocked on a dialog, approval or question
	StateStarting   State = "starting"    // the agent's start-up is not finished (nothing drawn, a splash)
	StateExited     State = "exited"      // the agent's process ended
	StateError      State = "error"       // idle again, but the last turn shows an error
	StateLimited    State = "limited"     // idle again, the last turn ended on a usage or rate limit
	StateLimitWait  State = "limit_wait"  // busy, but the CLI only waits out its provider's limit itself
	StateUnknown    State = "unknown"     // none of the above could be decided
)

// Idle reports whether the agent is at its prompt in state s: ready, or
// ready after a turn that showed an error or a limit.
func (s State) Idle() bool { return s == StateReady || s == StateError || s == StateLimited }

// Working reports whether the agent works on a turn in state s: busy, or
// busy waiting out its provider's limit.
func (s State) Working() bool { return s == StateBusy || s == StateLimitWait }

// Detection is what Detect saw and why.
type Detection struct {
	State State `json:"state"`
	// Field is the profile field (or the pane signal) that decided:
	// "ready", "busy", "needs_input", "trust", "starting", "exited", "error", "turn_open", "leave",
	// "pane_dead", "pane_current_command", "pane_alternate_on",
	// "dead_banner", "blank", "few_lines", "none".
	Field string `json:"field"`
	// Pattern is the regular expression that decided, if one did, and
	// Rule its key in the profile ("busy[1]", "trust[0].pattern"): see
	// Profile.Origin for its file and line, Profile.Explain for the rest.
	Pattern string `json:"pattern,omitempty"`
	Rule    string `json:"rule,omitempty"`
	// Line is the screen line it matched, and LineNo its 1-based number.
	Line   string `json:"line,omitempty"`
	LineNo int    `json:"line_no,omitempty"`
	// Question is the dialog's text, for needs_input.
	Question string `json:"question,omitempty"`
	// TrustKeys are the keys that accept a recognised trust dialog.
	TrustKeys []string `json:"trust_keys,omitempty"`
	// TrustChoose is the label of the option to select before TrustKeys
	// (TrustDialog.Choose; see MenuMove).
	TrustChoose string `json:"trust_choose,omitempty"`
	// LeaveKeys are the keys that leave a view hiding the state (field
	// "leave": Profile.Leave).
	LeaveKeys []string `json:"leave_keys,omitempty"`
	// ExitStatus is the exit status, for exited, when the pane or the
	// screen tells it.
	ExitStatus *int `json:"exit_status,omitempty"`
}

// PaneInfo carries what tmux says about a pane besides its text. The zero
// value means "unknown" and leaves the decision to the screen.
type PaneInfo struct {
	Dead           bool   // #{pane_dead}
	DeadStatus     int    // #{pane_dead_status}, when Dead
	CurrentCommand string // #{pane_current_command}; "" = unknown
	AlternateOn    bool   // #{alternate_on}
	// CursorKnown says CursorY holds #{cursor_y} (0-based screen row).
	CursorKnown bool
	CursorY     int
}

// deadBanner is the line tmux prints in a pane kept by remain-on-exit.
var deadBanner = textutil.LazyRegexp(`^Pane is dead \(status (?P<status>\d+)`)

// Detect classifies a screen (capture-pane text, with or without escape
// sequences) for profile p from the screen alone. See DetectPane.
func Detect(p *Profile, screen string) Detection {
	return DetectPane(p, screen, PaneInfo{})
}

// DetectPane classifies a screen for profile p, using pane metadata where
// the screen alone cannot decide.
//
// Patterns are applied line by line to the bottom of the screen only: the
// last p.BottomLines non-blank lines (a blank line is empty or holds only
// box borders), so transcript history above (old prompts, old spinners,
// old dialogs) never decides. The order is: exited (dead pane, tmux's
// "Pane is dead" banner, Exited patterns) > needs_input (Trust, then
// NeedsInput; the alternate screen for profiles that ask) > starting (a
// Starting line: a start-up not finished, whatever else shows) > busy (the
// pane's foreground command for profiles with IdleCommands, then Busy) >
// unknown (Undecided, then Leave with its keys in LeaveKeys) > ready (Ready; busy, field "turn_open", while a turn is open, see
// Profile.TurnOpen; refined to error when an Error line in the last
// p.ErrorLines non-blank lines is below every ErrorReset line) > starting
// (blank, or at most p.StartingMaxLines lines and no marker) > unknown.
// For a profile with NeedsInputAtCursor and a known cursor, NeedsInput
// patterns count only on the cursor's row (a prompt waits with the cursor
// after it; a line of output has the cursor below it).
// A ready line whose pattern has a named group "status" (the shell
// profile's prompt) also gives ExitStatus.
func DetectPane(p *Profile, screen string, info PaneInfo) Detection {
	c := p.patterns()
	if c == nil {
		q := *p
		if err := q.Compile(); err != nil {
			return Detection{State: StateUnknown, Field: "none", Pattern: "invalid profile: " + err.Error()}
		}
		c = q.patterns()
		p = &q
	}
	lines := screenLines(screen)
	nonBlank := nonBlankIndexes(lines)
	bottom := lastN(nonBlank, p.BottomLines)

	if info.Dead {
		st := info.DeadStatus
		return Detection{State: StateExited, Field: "pane_dead", ExitStatus: &st}
	}
	if len(nonBlank) > 0 {
		i := nonBlank[len(nonBlank)-1]
		if m := deadBanner.Re().FindStringSubmatch(lines[i]); m != nil {
			st, _ := strconv.Atoi(m[1])
			return Detection{State: StateExited, Field: "dead_banner", Pattern: deadBanner.Re().String(), Line: lines[i], LineNo: i + 1, ExitStatus: &st}
		}
	}
	if d, ok := match(StateExited, "exited", c.exited, lines, bottom); ok {
		d.ExitStatus = statusGroup(c.exited, d)
		return d
	}
	for k, re := range c.trust {
		if i, ok := lowest(re, lines, bottom); ok {
			return Detection{State: StateNeedsInput, Field: "trust", Pattern: re.String(), Rule: "trust[" + strconv.Itoa(k) + "].pattern", Line: lines[i], LineNo: i + 1,
				Question: question(c, lines, bottom), TrustKeys: append([]string(nil), p.Trust[k].Keys...), TrustChoose: p.Trust[k].Choose}
		}
	}
	niLines := bottom
	if p.NeedsInputAtCursor && info.CursorKnown {
		niLines = nil
		if slices.Contains(bottom, info.CursorY) {
			niLines = []int{info.CursorY}
		}
	}
	if d, ok := match(StateNeedsInput, "needs_input", c.needsInput, lines, niLines); ok {
		d.Question = question(c, lines, bottom)
		return d
	}
	if p.AltScreenNeedsInput && info.AlternateOn {
		return Detection{State: StateNeedsInput, Field: "pane_alternate_on", Question: tail(lines, nonBlank, 3)}
	}
	if d, ok := match(StateStarting, "starting", c.starting, lines, bottom); ok {
		return d
	}
	if len(p.IdleCommands) > 0 && info.CurrentCommand != "" && !slices.Contains(p.IdleCommands, info.CurrentCommand) {
		return Detection{State: StateBusy, Field: "pane_current_command", Line: info.CurrentCommand}
	}
	if d, ok := match(StateBusy, "busy", c.busy, lines, bottom); ok {
		if w, ok := match(StateLimitWait, "limit_busy", c.limitBusy, lines, bottom); ok {
			return w // busy only waiting out a limit
		}
		return d
	}
	if d, ok := match(StateUnknown, "undecided", c.undecided, lines, bottom); ok {
		return d
	}
	if d, ok := leaveView(p, c, lines, bottom); ok {
		return d
	}
	if d, ok := match(StateReady, "ready", c.ready, lines, bottom); ok {
		return readyOr(p, c, d, lines, nonBlank, bottom)
	}
	switch {
	case len(nonBlank) == 0:
		return Detection{State: StateStarting, Field: "blank"}
	case p.StartingMaxLines > 0 && len(nonBlank) <= p.StartingMaxLines:
		return Detection{State: StateStarting, Field: "few_lines"}
	}
	return Detection{State: StateUnknown, Field: "none"}
}

// UnusableScreen reports whether screen (a start screen) shows a line of p's
// Unusable patterns in its bottom lines: the agent cannot answer a
// prompt. The detection names the line and the rule (state error).
func (p *Profile) UnusableScreen(screen string) (Detection, bool) {
	c := p.patterns()
	if c == nil || len(c.unusable) == 0 {
		return Detection{}, false
	}
	lines := screenLines(screen)
	return match(StateError, "unusable", c.unusable, lines, lastN(nonBlankIndexes(lines), p.BottomLines))
}

// leaveView is a screen showing a view of p's Leave rules: unknown, with
// the keys that leave it.
func leaveView(p *Profile, c *compiled, lines []string, bottom []int) (Detection, bool) {
	for k, re := range c.leave {
		if i, ok := lowest(re, lines, bottom); ok {
			return Detection{State: StateUnknown, Field: "leave", Pattern: re.String(), Rule: "leave[" + strconv.Itoa(k) + "].pattern",
				Line: lines[i], LineNo: i + 1, LeaveKeys: append([]string(nil), p.Leave[k].Keys...)}, true
		}
	}
	return Detection{}, false
}

// readyOr is the ready detection d, or what refines it: a turn still
// open above the ready line (busy; not in a view scrolled up, where the
// turn's end may be off screen), or an error in the last lines.
func readyOr(p *Profile, c *compiled, d Detection, lines []string, nonBlank, bottom []int) Detection {
	_, scrolled := match(StateReady, "scrolled", c.scrolled, lines, bottom)
	if i, ok := openTurn(c, lines, d.LineNo-1); ok && !scrolled {
		k := firstMatch(c.turnOpen, lines[i])
		return Detection{State: StateBusy, Field: "turn_open", Pattern: c.turnOpen[k].String(), Rule: ruleKey("turn_open", k), Line: lines[i], LineNo: i + 1}
	}
	d.ExitStatus = statusGroup(c.ready, d)
	if e, ok := lastError(c, lines, lastN(nonBlank, p.ErrorLines), d.LineNo-1); ok {
		return e
	}
	return d
}

// match returns a detection for the first pattern (in profile order) that
// matches a bottom line, reporting the lowest line it matches.
func match(st State, field string, res []*regexp.Regexp, lines []string, bottom []int) (Detection, bool) {
	for k, re := range res {
		if i, ok := lowest(re, lines, bottom); ok {
			return Detection{State: st, Field: field, Pattern: re.String(), Rule: ruleKey(field, k), Line: lines[i], LineNo: i + 1}, true
		}
	}
	return Detection{}, false
}

// ruleKey is the key of the k-th pattern of a profile's list field.
func ruleKey(field string, k int) string { return field + "[" + strconv.Itoa(k) + "]" }

func lowest(re *regexp.Regexp, lines []string, idx []int) (int, bool) {
	for k := len(idx) - 1; k >= 0; k-- {
		if re.MatchString(lines[idx[k]]) {
			return idx[k], true
		}
	}
	return 0, false
}

// openTurn reports the line of a turn that started and has not ended: the
// nearest TurnOpen or TurnClosed line above the ready line at index ready,
// when it is a TurnOpen line.
func openTurn(c *compiled, lines []string, ready int) (int, bool) {
	if len(c.turnOpen) == 0 {
		return 0, false
	}
	for i := ready - 1; i >= 0; i-- {
		if anyMatch(c.turnClosed, lines[i]) {
			return 0, false
		}
		if anyMatch(c.turnOpen, lines[i]) {
			return i, true
		}
	}
	return 0, false
}

// firstMatch is the index of the first of res that matches l; -1 for
// none.
func firstMatch(res []*regexp.Regexp, l string) int {
	for k, re := range res {
		if re.MatchString(l) {
			return k
		}
	}
	return -1
}

// lastError reports an error when an Error line among idx is below every
// ErrorReset line, and a limit when a Limited line is: a limit wins over
// an error below it (Gemini CLI's "✕ [API Error: You have exhausted your
// daily quota…]" has "ℹ This request failed." under it). The ready line
// (index ready) is no reset: it is the composer, whatever it holds
// (Codex's rotating placeholder "› Ask Codex to do anything" looks like
// an echoed prompt).
func lastError(c *compiled, lines []string, idx []int, ready int) (Detection, bool) {
	var found *Detection
	for k := len(idx) - 1; k >= 0; k-- {
		l := lines[idx[k]]
		reset := false
		for _, re := range c.errReset {
			if idx[k] != ready && re.MatchString(l) {
				reset = true
				break
			}
		}
		if reset {
			break
		}
		for j, re := range c.limited {
			if re.MatchString(l) {
				return Detection{State: StateLimited, Field: "limited", Pattern: re.String(), Rule: ruleKey("limited", j), Line: l, LineNo: idx[k] + 1}, true
			}
		}
		if found != nil {
			continue
		}
		for j, re := range c.errs {
			if re.MatchString(l) {
				found = &Detection{State: StateError, Field: "error", Pattern: re.String(), Rule: ruleKey("error", j), Line: l, LineNo: idx[k] + 1}
				break
			}
		}
	}
	if found != nil {
		return *found, true
	}
	return Detection{}, false
}

// statusGroup reads a named group "status" of the exited pattern that
// decided d, if it has one.
func statusGroup(res []*regexp.Regexp, d Detection) *int {
	for _, re := range res {
		if re.String() != d.Pattern {
			continue
		}
		k := re.SubexpIndex("status")
		if k < 0 {
			return nil
		}
		if m := re.FindStringSubmatch(d.Line); m != nil && m[k] != "" {
			if st, err := strconv.Atoi(m[k]); err == nil {
				return &st
			}
		}
	}
	return nil
}

var (
	ruleLine = textutil.LazyRegexp(`^\s*[─━═▀]{8,}\s*$`)
	boxTop   = textutil.LazyRegexp(`^\s*[╭┌]`)
)

// question returns the dialog text: from the topmost bottom line that
// matches a needs-input or trust pattern, up to the dialog's top (a rule, a
// box's top edge, two blank lines or an ErrorReset line such as an echoed
// prompt), down to the last non-blank line.
func question(c *compiled, lines []string, bottom []int) string {
	top := -1
	for _, i := range bottom {
		if anyMatch(c.needsInput, lines[i]) || anyMatch(c.trust, lines[i]) {
			top = i
			break
		}
	}
	if top < 0 {
		return ""
	}
	start := top
	for j := top - 1; j >= 0; j-- {
		l := lines[j]
		if ruleLine.Re().MatchString(l) || boxTop.Re().MatchString(l) || anyMatch(c.errReset, l) || anyMatch(c.busy, l) {
			break
		}
		if isBlank(l) && j > 0 && isBlank(lines[j-1]) {
			break
		}
		start = j
	}
	end := bottom[len(bottom)-1]
	var out []string
	for _, l := range lines[start : end+1] {
		l = strings.TrimFunc(l, isBorder)
		if strings.TrimFunc(l, isBoxDrawing) == "" {
			l = ""
		}
		if l == "" && (len(out) == 0 || out[len(out)-1] == "") {
			continue
		}
		out = append(out, l)
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	if len(out) > 30 {
		out = out[:30]
	}
	return strings.Join(out, "\n")
}

func anyMatch(res []*regexp.Regexp, l string) bool {
	for _, re := range res {
		if re.MatchString(l) {
			return true
		}
	}
	return false
}

func tail(lines []string, nonBlank []int, n int) string {
	var out []string
	for _, i := range lastN(nonBlank, n) {
		out = append(out, strings.TrimSpace(lines[i]))
	}
	return strings.Join(out, "\n")
}

// MaskVolatile returns screen without escape sequences and with every line
// that matches one of p's Volatile patterns replaced by a fixed marker, for
// hashing: two captures that differ only in timers and spinners mask equal.
func MaskVolatile(p *Profile, screen string) string {
	c := p.patterns()
	if c == nil {
		q := *p
		if err := q.Compile(); err == nil {
			c = q.patterns()
		} else {
			c = &compiled{}
		}
	}
	lines := screenLines(screen)
	for i, l := range lines {
		if anyMatch(c.volatile, l) {
			lines[i] = "\x00volatile"
		}
	}
	return strings.Join(lines, "\n")
}

// screenLines splits a capture into lines without escapes, carriage
// returns or trailing spaces.
func screenLines(screen string) []string {
	lines := strings.Split(textutil.StripEscapes(screen), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r") // not NBSP: Claude's input box is "❯"+NBSP
	}
	return lines
}

func isBorder(r rune) bool {
	return unicode.IsSpace(r) || r == '│' || r == '┃' || r == '\u200b'
}

func isBoxDrawing(r rune) bool {
	return isBorder(r) || (r >= 0x2500 && r <= 0x259f)
}

func isBlank(l string) bool { return strings.TrimFunc(l, isBorder) == "" }

func nonBlankIndexes(lines []string) []int {
	var out []int
	for i, l := range lines {
		if !isBlank(l) {
			out = append(out, i)
		}
	}
	return out
}

func lastN(idx []int, n int) []int {
	if len(idx) > n {
		return idx[len(idx)-n:]
	}
	return idx
}
