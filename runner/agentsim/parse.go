package agentsim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// dirKind is the kind of one prompt line.
type dirKind int

const (
	dirOther   dirKind = iota // not a directive: acknowledged with "Done: …"
	dirBlank                  // empty or white space only: ignored
	dirSleep                  // sleep DURATION
	dirSilent                 // silent DURATION
	dirSay                    // say TEXT
	dirWrite                  // write PATH TEXT
	dirAsk                    // ask QUESTION
	dirConfirm                // confirm QUESTION
	dirRun                    // run ARG...
	dirExit                   // exit N
	dirCrash                  // crash
	dirHook                   // hook subagent | hook none | hook early DURATION | hook late DURATION
	dirRecall                 // recall
	dirUsage                  // usage IN OUT [CACHED [COST]]
	dirLimit                  // limit TEXT
)

// directive is one parsed prompt line.
type directive struct {
	kind dirKind
	dur  time.Duration // sleep, silent
	text string        // say, write, ask; the line itself for dirOther
	path string        // write
	argv []string      // run
	code int           // exit
	// usage: input, output and cached tokens; cost in dollars when
	// hasCost.
	usage   [3]int64
	cost    float64
	hasCost bool
}

// parseLine parses one prompt line. A line is a directive only when its
// keyword is followed by valid arguments; anything else is dirOther, so odd
// text such as "sleep well" is acknowledged, not refused.
func parseLine(line string) directive {
	line = strings.TrimSuffix(line, "\r")
	t := strings.TrimLeft(line, " \t")
	if strings.TrimSpace(t) == "" {
		return directive{kind: dirBlank}
	}
	word, rest, _ := strings.Cut(t, " ")
	if w, r, ok := strings.Cut(t, "\t"); ok && len(w) < len(word) {
		word, rest = w, r
	}
	if d, ok := keyword(word, strings.TrimLeft(rest, " \t")); ok {
		return d
	}
	return directive{kind: dirOther, text: line}
}

// keyword parses the arguments (rest, leading blanks trimmed) of each
// directive's keyword; ok false (a word that is none, or bad arguments)
// makes the line dirOther. A switch, not a package-level map: a map is built in the
// package's init, in every runner process.
func keyword(word, rest string) (d directive, ok bool) {
	switch word {
	case "sleep":
		d, ok = durationDirective(dirSleep, rest)
	case "silent":
		d, ok = durationDirective(dirSilent, rest)
	case "say":
		d, ok = directive{kind: dirSay, text: rest}, true
	case "write":
		d, ok = parseWrite(rest)
	case "ask":
		d, ok = textDirective(dirAsk, rest)
	case "confirm":
		d, ok = textDirective(dirConfirm, rest)
	case "limit":
		d, ok = textDirective(dirLimit, rest)
	case "run":
		d, ok = parseRun(rest)
	case "exit":
		d, ok = parseExit(rest)
	case "crash":
		d, ok = bareDirective(dirCrash, rest)
	case "recall":
		d, ok = bareDirective(dirRecall, rest)
	case "hook":
		d, ok = parseHook(rest)
	case "usage":
		d, ok = parseUsage(rest)
	}
	return d, ok
}

// durationDirective is a directive of kind taking one duration (sleep,
// silent).
func durationDirective(kind dirKind, rest string) (directive, bool) {
	d, ok := parseDuration(rest)
	return directive{kind: kind, dur: d}, ok
}

// parseDuration parses a duration that is not negative, blanks around it
// ignored.
func parseDuration(s string) (time.Duration, bool) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	return d, err == nil && d >= 0
}

// textDirective is a directive of kind taking a text that must not be
// blank (ask, limit).
func textDirective(kind dirKind, rest string) (directive, bool) {
	return directive{kind: kind, text: rest}, strings.TrimSpace(rest) != ""
}

// bareDirective is a directive of kind taking no arguments (crash,
// recall).
func bareDirective(kind dirKind, rest string) (directive, bool) {
	return directive{kind: kind}, strings.TrimSpace(rest) == ""
}

// parseWrite parses "write PATH TEXT" (the text may be empty).
func parseWrite(rest string) (directive, bool) {
	p, text, _ := strings.Cut(rest, " ")
	return directive{kind: dirWrite, path: p, text: text}, p != ""
}

// parseRun parses "run ARG...", split as SplitArgs does.
func parseRun(rest string) (directive, bool) {
	argv, err := splitArgs(rest)
	return directive{kind: dirRun, argv: argv}, err == nil && len(argv) > 0
}

// parseExit parses "exit N", N an exit status (0 to 255).
func parseExit(rest string) (directive, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(rest))
	return directive{kind: dirExit, code: n}, err == nil && n >= 0 && n <= 255
}

// parseHook parses "hook subagent", "hook none", "hook early DURATION"
// and "hook late DURATION".
func parseHook(rest string) (directive, bool) {
	what, arg, _ := strings.Cut(strings.TrimSpace(rest), " ")
	switch what {
	case "subagent", "none":
		return directive{kind: dirHook, text: what}, strings.TrimSpace(arg) == ""
	case "early", "late":
		d, ok := parseDuration(arg)
		return directive{kind: dirHook, text: what, dur: d}, ok
	}
	return directive{}, false
}

// parseUsage parses "usage IN OUT [CACHED [COST]]": token counts that
// are not negative, and a cost in dollars.
func parseUsage(rest string) (directive, bool) {
	f := strings.Fields(rest)
	if len(f) < 2 || len(f) > 4 {
		return directive{}, false
	}
	d := directive{kind: dirUsage}
	for i, w := range f[:min(len(f), 3)] {
		n, err := strconv.ParseInt(w, 10, 64)
		if err != nil || n < 0 {
			return directive{}, false
		}
		d.usage[i] = n
	}
	if len(f) == 4 {
		c, err := strconv.ParseFloat(f[3], 64)
		if err != nil || c < 0 {
			return directive{}, false
		}
		d.cost, d.hasCost = c, true
	}
	return d, true
}

// SplitArgs splits s into an argv on spaces and tabs, with '…' and "…"
// quoting (no escapes; adjacent quoted and bare parts join into one
// argument, ” is an empty argument). It is how `run` lines and --hook are
// split.
func SplitArgs(s string) ([]string, error) { return splitArgs(s) }

func splitArgs(s string) ([]string, error) {
	var (
		argv  []string
		cur   strings.Builder
		inArg bool
		quote rune
	)
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inArg = r, true
		case r == ' ' || r == '\t':
			if inArg {
				argv = append(argv, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote in %q", quote, s)
	}
	if inArg {
		argv = append(argv, cur.String())
	}
	return argv, nil
}
