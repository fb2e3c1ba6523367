// Compiling a profile's patterns, and the questions asked of them.

package profile

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// compiled holds a profile's regexes, compiled once: by Compile, or for
// the built-in profiles (whose patterns the tests compile) at their first
// use, when lazy is set (see compileLazy). Read them through
// Profile.patterns.
type compiled struct {
	lazy *lazyCompiled

	ready, busy, needsInput, exited, errs, errReset, volatile, starting                   []*regexp.Regexp
	trust, leave, unusable, turnOpen, turnClosed, sessionID, scrolled, undecided, limited []*regexp.Regexp
	limitBusy                                                                             []*regexp.Regexp
	answerStart, answerEnd, answerAfter, answerSidebar                                    []*regexp.Regexp
	menuCursor, keyOptions                                                                *regexp.Regexp
}

// lazyCompiled compiles the patterns of the profile src returns (a
// snapshot checked by compileLazy, or a built-in profile made afresh),
// once, on first use.
type lazyCompiled struct {
	once sync.Once
	src  func() *Profile
	done *compiled
}

// patterns returns p's compiled patterns (compiling them now if they
// were left for their first use); nil before Compile.
func (p *Profile) patterns() *compiled {
	c := p.re
	if c == nil || c.lazy == nil {
		return c
	}
	c.lazy.once.Do(func() {
		done := &compiled{}
		if err := done.fill(c.lazy.src()); err != nil {
			panic("built-in " + err.Error()) // a bug in agents/*.toml: TestBuiltinsCompile fails first
		}
		c.lazy.done = done
	})
	return c.lazy.done
}

// Compile checks and compiles every pattern of p and fills defaults. It
// must be called (Builtins and MergeProfile do) before p is shared between
// goroutines; after it, p is read-only.
func (p *Profile) Compile() error {
	if err := p.check(); err != nil {
		return err
	}
	c := &compiled{}
	if err := c.fill(p); err != nil {
		return err
	}
	p.re = c
	return nil
}

// compileLazy is Compile for a built-in profile: the defaults filled and
// every check but the patterns' made now; the patterns, which the tests
// compile, at their first use (most commands use one profile, or none).
func (p *Profile) compileLazy() error {
	if err := p.check(); err != nil {
		return err
	}
	snap := p.clone()
	p.re = &compiled{lazy: &lazyCompiled{src: func() *Profile { return snap }}}
	return nil
}

// check fills p's defaults and checks what is no pattern.
func (p *Profile) check() error {
	if p.Name == "" {
		return errors.New("profile: empty name")
	}
	if len(p.Command) == 0 || p.Command[0] == "" {
		return keyErrorf(p.Name, "command", "empty launch argv")
	}
	if p.EnterDelay.Duration == 0 {
		p.EnterDelay.Duration = DefaultEnterDelay
	}
	if p.BottomLines <= 0 {
		p.BottomLines = DefaultBottomLines
	}
	if p.ErrorLines <= 0 {
		p.ErrorLines = p.BottomLines
	}
	if p.StartingMaxLines == 0 {
		p.StartingMaxLines = DefaultStartingMaxLines
	}
	if err := p.checkHeadless(); err != nil {
		return err
	}
	if err := p.checkPermissionsAsk(); err != nil {
		return err
	}
	if p.Hook != nil && p.Hook.Kind != HookKindSettingsFile && p.Hook.Kind != HookKindFlag {
		return keyErrorf(p.Name, "hook.kind", "unknown kind %q (known: %q, %q)", p.Hook.Kind, HookKindSettingsFile, HookKindFlag)
	}
	if p.LimitChoose != "" && p.MenuCursor == "" {
		return keyErrorf(p.Name, "limit_choose", "needs \"menu_cursor\" (how the selected option looks)")
	}
	if p.Spend != "" && !slices.Contains(SpendKinds, p.Spend) {
		return keyErrorf(p.Name, "spend", "unknown record %q (known: %s)", p.Spend, strings.Join(SpendKinds, ", "))
	}
	if len(p.Resume) > 0 && !slices.ContainsFunc(p.Resume, func(a string) bool { return strings.Contains(a, SessionPlaceholder) }) {
		return keyErrorf(p.Name, "resume", "no %s placeholder (e.g. [\"--resume\", \"%s\"])", SessionPlaceholder, SessionPlaceholder)
	}
	for i, v := range p.Leave {
		if len(v.Keys) == 0 {
			return keyErrorf(p.Name, fmt.Sprintf("leave[%d].keys", i), "no keys to leave the view")
		}
	}
	for i, t := range p.Trust {
		if t.Choose != "" && p.MenuCursor == "" {
			return keyErrorf(p.Name, fmt.Sprintf("trust[%d].choose", i), "needs \"menu_cursor\" (how the selected option looks)")
		}
		if len(t.Keys) == 0 {
			return keyErrorf(p.Name, fmt.Sprintf("trust[%d].keys", i), "no keys to accept the dialog")
		}
	}
	return nil
}

// fill compiles every pattern of p into c; errors name the key.
func (c *compiled) fill(p *Profile) error {
	var err error
	for _, f := range c.lists(p) {
		if *f.dest, err = compileAll(p.Name, f.key, *f.src); err != nil {
			return err
		}
	}
	for i, re := range c.sessionID {
		if re.NumSubexp() < 1 {
			return keyErrorf(p.Name, fmt.Sprintf("session_id[%d]", i), "no capture group for the id (e.g. \"--resume (\\\\S+)\")")
		}
	}
	return p.compileDialogs(c)
}

// patternList ties a profile's list of patterns (its key, e.g. "busy")
// to where Compile puts them.
type patternList struct {
	key  string
	src  *[]string
	dest *[]*regexp.Regexp
}

// lists returns p's pattern lists and their places in c: the state rules
// first, in the order DetectPane tries them (trust, a list of tables, is
// apart), then the others.
func (c *compiled) lists(p *Profile) []patternList {
	return []patternList{
		{"exited", &p.Exited, &c.exited},
		{"needs_input", &p.NeedsInput, &c.needsInput},
		{"starting", &p.Starting, &c.starting},
		{"busy", &p.Busy, &c.busy},
		{"limit_busy", &p.LimitBusy, &c.limitBusy},
		{"undecided", &p.Undecided, &c.undecided},
		{"ready", &p.Ready, &c.ready},
		{"scrolled", &p.Scrolled, &c.scrolled},
		{"turn_open", &p.TurnOpen, &c.turnOpen},
		{"turn_closed", &p.TurnClosed, &c.turnClosed},
		{"limited", &p.Limited, &c.limited},
		{"error", &p.Error, &c.errs},
		{"error_reset", &p.ErrorReset, &c.errReset},
		{"volatile", &p.Volatile, &c.volatile},
		{"answer_start", &p.AnswerStart, &c.answerStart},
		{"answer_end", &p.AnswerEnd, &c.answerEnd},
		{"answer_after", &p.AnswerAfter, &c.answerAfter},
		{"answer_sidebar", &p.AnswerSidebar, &c.answerSidebar},
		{"session_id", &p.SessionID, &c.sessionID},
		{"unusable", &p.Unusable, &c.unusable},
	}
}

// rule is one compiled pattern of a profile.
type rule struct {
	field string // the list it is in: "busy", "trust"
	key   string // its key: "busy[1]", "trust[0].pattern"
	re    *regexp.Regexp
}

// rules returns every compiled pattern of p (nil before Compile): those
// of the state rules first, in the order DetectPane tries them, then
// menu_cursor, volatile, the answer's and session_id.
func (p *Profile) rules() []rule {
	c := p.patterns()
	if c == nil {
		return nil
	}
	var out []rule
	add := func(field string, res []*regexp.Regexp, key func(int) string) {
		for i, re := range res {
			out = append(out, rule{field: field, key: key(i), re: re})
		}
	}
	index := func(field string) func(int) string {
		return func(i int) string { return field + "[" + strconv.Itoa(i) + "]" }
	}
	for _, l := range c.lists(p) {
		if l.key == "needs_input" { // trust dialogs come first: a needs_input of their own
			add("trust", c.trust, func(i int) string { return "trust[" + strconv.Itoa(i) + "].pattern" })
		}
		add(l.key, *l.dest, index(l.key))
		if l.key == "undecided" { // views left with keys are checked with undecided
			add("leave", c.leave, func(i int) string { return "leave[" + strconv.Itoa(i) + "].pattern" })
		}
		if l.key == "error_reset" && c.menuCursor != nil {
			add("menu_cursor", []*regexp.Regexp{c.menuCursor}, func(int) string { return "menu_cursor" })
		}
	}
	return out
}

// compileDialogs checks and compiles how p's dialogs are answered: the
// menu cursor, the approval's option, each trust dialog's pattern, keys
// and option.
func (p *Profile) compileDialogs(c *compiled) error {
	var err error
	if p.MenuCursor != "" {
		if c.menuCursor, err = compileOne(p.Name, "menu_cursor", p.MenuCursor); err != nil {
			return err
		}
	}
	if p.ApproveChoose != "" {
		if _, err := compileOne(p.Name, "approve_choose", p.ApproveChoose); err != nil {
			return err
		}
	}
	if p.KeyOptions != "" {
		if c.keyOptions, err = compileOne(p.Name, "key_options", p.KeyOptions); err != nil {
			return err
		}
		if c.keyOptions.SubexpIndex("key") < 0 {
			return keyErrorf(p.Name, "key_options", "needs a group (?P<key>…): the key that chooses an option")
		}
	}
	if p.LimitChoose != "" {
		if _, err := compileOne(p.Name, "limit_choose", p.LimitChoose); err != nil {
			return err
		}
	}
	for i, t := range p.Trust {
		re, err := compileOne(p.Name, fmt.Sprintf("trust[%d].pattern", i), t.Pattern)
		if err != nil {
			return err
		}
		if t.Choose != "" {
			if _, err := compileOne(p.Name, fmt.Sprintf("trust[%d].choose", i), t.Choose); err != nil {
				return err
			}
		}
		c.trust = append(c.trust, re)
	}
	for i, v := range p.Leave {
		re, err := compileOne(p.Name, fmt.Sprintf("leave[%d].pattern", i), v.Pattern)
		if err != nil {
			return err
		}
		c.leave = append(c.leave, re)
	}
	return nil
}

func compileAll(profile, key string, src []string) ([]*regexp.Regexp, error) {
	out := make([]*regexp.Regexp, 0, len(src))
	for i, s := range src {
		re, err := compileOne(profile, fmt.Sprintf("%s[%d]", key, i), s)
		if err != nil {
			return nil, err
		}
		out = append(out, re)
	}
	return out, nil
}

func compileOne(profile, key, src string) (*regexp.Regexp, error) {
	if src == "" {
		return nil, keyErrorf(profile, key, "empty pattern")
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, keyErrorf(profile, key, "bad regular expression: %w", err)
	}
	return re, nil
}

// Compiled reports whether Compile has filled p's patterns.
func (p *Profile) Compiled() bool { return p.re != nil }

// MatchesNeedsInput reports whether line l matches one of p's NeedsInput
// patterns (false before Compile).
func (p *Profile) MatchesNeedsInput(l string) bool {
	c := p.patterns()
	return c != nil && anyMatch(c.needsInput, l)
}

// MatchesTrust reports whether line l matches one of p's trust-dialog
// patterns (false before Compile).
func (p *Profile) MatchesTrust(l string) bool {
	c := p.patterns()
	return c != nil && anyMatch(c.trust, l)
}
