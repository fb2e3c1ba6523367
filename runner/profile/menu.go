// Choosing a dialog's option by its label.

package profile

import (
	"regexp"
	"strings"
)

// MenuMove says how to select the option whose line matches label on
// screen, from the selected one (the line p's MenuCursor matches nearest
// above or below it, within the bottom lines): moves > 0 is that many
// Down, < 0 that many Up, 0 means it is selected. Every non-blank line
// between the two counts as one option. ok is false when the label, the
// cursor or a usable pattern is missing: then nothing can be chosen.
func MenuMove(p *Profile, screen, label string) (moves int, ok bool) {
	c := p.patterns()
	if c == nil || c.menuCursor == nil || label == "" {
		return 0, false
	}
	re, err := regexp.Compile(label)
	if err != nil {
		return 0, false
	}
	lines := screenLines(screen)
	bottom := lastN(nonBlankIndexes(lines), p.BottomLines)
	target := -1
	for i := len(bottom) - 1; i >= 0; i-- {
		if re.MatchString(lines[bottom[i]]) {
			target = i
			break
		}
	}
	if target < 0 {
		return 0, false
	}
	cursor, best := -1, len(bottom)
	for i, li := range bottom {
		if !c.menuCursor.MatchString(lines[li]) || strings.TrimSpace(lines[li]) == "" {
			continue
		}
		if d := abs(i - target); d < best {
			cursor, best = i, d
		}
	}
	if cursor < 0 {
		return 0, false
	}
	return target - cursor, true
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
