package profile

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/runner-cli/runner/internal/textutil"
)

// ScreenAnswer takes the agent's answer of its last turn off a screen (or
// history) capture, without the CLI's chrome, by the profile's answer
// rules:
//
//   - with AnswerStart: the last line that matches it (the marker removed)
//     and the lines under it that continue the block: blank or indented
//     lines, up to a line that is chrome (AnswerEnd, a ready, busy, dialog,
//     timer or turn-closed line) or starts at the left edge;
//   - without: the lines between the last AnswerAfter line (the echoed
//     prompt) and the last AnswerEnd line under it.
//
// The common indentation is removed and blank lines at either end dropped;
// "" when the profile has no rules or the screen shows no answer.
func ScreenAnswer(p *Profile, screen string) string {
	c := p.patterns()
	if c == nil || (len(c.answerStart) == 0 && len(c.answerEnd) == 0) {
		return ""
	}
	lines := strings.Split(textutil.StripEscapes(screen), "\n")
	cut := sidebarColumn(c.answerSidebar, lines)
	for i, l := range lines {
		if cut > 0 {
			if r := []rune(l); len(r) > cut {
				l = string(r[:cut])
			}
		}
		lines[i] = strings.TrimRight(l, " \t\u00a0")
	}
	chrome := func(l string) bool {
		return anyMatch(c.answerEnd, l) || anyMatch(c.ready, l) || anyMatch(c.busy, l) ||
			anyMatch(c.needsInput, l) || anyMatch(c.volatile, l) || anyMatch(c.turnClosed, l)
	}
	var block []string
	if len(c.answerStart) > 0 {
		start := -1
		var marker *regexp.Regexp
		for i := len(lines) - 1; i >= 0 && start < 0; i-- {
			for _, re := range c.answerStart {
				if loc := re.FindStringIndex(lines[i]); loc != nil && loc[0] == 0 {
					start, marker = i, re
					break
				}
			}
		}
		if start < 0 {
			return ""
		}
		first := lines[start]
		loc := marker.FindStringIndex(first)
		indent := utf8.RuneCountInString(first[:loc[1]])
		block = append(block, strings.Repeat(" ", indent)+first[loc[1]:])
		for _, l := range lines[start+1:] {
			if strings.TrimSpace(l) == "" {
				block = append(block, "")
				continue
			}
			if chrome(l) || !strings.HasPrefix(l, " ") {
				break
			}
			block = append(block, l)
		}
	} else {
		end := -1
		for i := len(lines) - 1; i >= 0; i-- {
			if anyMatch(c.answerEnd, lines[i]) {
				end = i
				break
			}
		}
		if end < 0 {
			return ""
		}
		from := -1
		for i := end - 1; i >= 0; i-- {
			if anyMatch(c.answerAfter, lines[i]) {
				from = i
				break
			}
		}
		if from < 0 {
			return ""
		}
		for _, l := range lines[from+1 : end] {
			if strings.TrimSpace(l) != "" && chrome(l) {
				continue
			}
			block = append(block, l)
		}
	}
	return dedent(block)
}

// sidebarColumn is the rune column where the first line matching one of
// sidebar starts its match, when that is right of the left edge and white
// space precedes it (a panel beside the transcript); 0 when none does.
func sidebarColumn(sidebar []*regexp.Regexp, lines []string) int {
	for _, l := range lines {
		for _, re := range sidebar {
			loc := re.FindStringIndex(l)
			if loc == nil || loc[0] == 0 {
				continue
			}
			before := l[:loc[0]]
			if !strings.HasSuffix(before, "  ") {
				continue
			}
			return utf8.RuneCountInString(before)
		}
	}
	return 0
}

// dedent removes the indentation common to the non-blank lines and the
// blank lines at either end.
func dedent(block []string) string {
	for len(block) > 0 && strings.TrimSpace(block[0]) == "" {
		block = block[1:]
	}
	for len(block) > 0 && strings.TrimSpace(block[len(block)-1]) == "" {
		block = block[:len(block)-1]
	}
	common := -1
	for _, l := range block {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " "))
		if common < 0 || n < common {
			common = n
		}
	}
	out := make([]string, len(block))
	for i, l := range block {
		if len(l) >= common && common > 0 {
			l = l[common:]
		}
		out[i] = l
	}
	return strings.Join(out, "\n")
}
