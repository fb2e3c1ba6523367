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
	dirOther  dirKind = iota // not a directive: acknowledged with "Done: …"
	dirBlank                 // empty or white space only: ignored
	dirSleep                 // sleep DURATION
	dirSilent                // silent DURATION
	dirSay                   // say TEXT
	dirWrite                 // write PATH TEXT
	dirAsk                   // ask QUESTION
	dirRun                   // run ARG...
	dirExit                  // exit N
	dirCrash                 // crash
	dirHook                  // hook subagent | hook none | hook early DURATION | hook late DURATION
	dirRecall                // recall
	dirUsage                 // usage IN OUT [CACHED [COST]]
	dirLimit                 // limit TEXT
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
	other := directive{kind: dirOther, text: line}
	word, rest, _ := strings.Cut(t, " ")
	if w, r, ok := strings.Cut(t, "\t"); ok && len(w) < len(word) {
		word, rest = w, r
	}
	rest = strings.TrimLeft(rest, " \t")
	switch word {
	case "sleep", "silent":
		d, err := time.ParseDuration(strings.TrimSpace(rest))
		if err != nil || d < 0 {
			return other
		}
		if word == "sleep" {
			return directive{kind: dirSleep, dur: d}
		}
		return directive{kind: dirSilent, dur: d}
	case "say":
		return directive{kind: dirSay, text: rest}
	case "write":
		p, text, _ := strings.Cut(rest, " ")
		if p == "" {
			return other
		}
		return directive{kind: dirWrite, path: p, text: text}
	case "ask":
		if strings.TrimSpace(rest) == "" {
			return other
		}
		return directive{kind: dirAsk, text: rest}
	case "run":
		argv, err := splitArgs(rest)
		if err != nil || len(argv) == 0 {
			return other
		}
		return directive{kind: dirRun, argv: argv}
	case "exit":
		n, err := strconv.Atoi(strings.TrimSpace(rest))
		if err != nil || n < 0 || n > 255 {
			return other
		}
		return directive{kind: dirExit, code: n}
	case "crash":
		if strings.TrimSpace(rest) != "" {
			return other
		}
		return directive{kind: dirCrash}
	case "hook":
		what, arg, _ := strings.Cut(strings.TrimSpace(rest), " ")
		switch what {
		case "subagent", "none":
			if strings.TrimSpace(arg) != "" {
				return other
			}
			return directive{kind: dirHook, text: what}
		case "early", "late":
			d, err := time.ParseDuration(strings.TrimSpace(arg))
			if err != nil || d < 0 {
				return other
			}
			return directive{kind: dirHook, text: what, dur: d}
		}
		return other
	case "recall":
		if strings.TrimSpace(rest) != "" {
			return other
		}
		return directive{kind: dirRecall}
	case "limit":
		if strings.TrimSpace(rest) == "" {
			return other
		}
		return directive{kind: dirLimit, text: rest}
	case "usage":
		f := strings.Fields(rest)
		if len(f) < 2 || len(f) > 4 {
			return other
		}
		d := directive{kind: dirUsage}
		for i, w := range f[:min(len(f), 3)] {
			n, err := strconv.ParseInt(w, 10, 64)
			if err != nil || n < 0 {
				return other
			}
			d.usage[i] = n
		}
		if len(f) == 4 {
			c, err := strconv.ParseFloat(f[3], 64)
			if err != nil || c < 0 {
				return other
			}
			d.cost, d.hasCost = c, true
		}
		return d
	}
	return other
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
