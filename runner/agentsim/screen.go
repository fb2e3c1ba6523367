package agentsim

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Screen texts of the contract (see doc.go).
const (
	spinnerText   = "Working… (esc to interrupt)"
	trustQuestion = "Do you trust the files in this folder?"
	maxBoxLines   = 6
)

// spinnerGlyphs cycle on the busy line, one step per 100 ms.
var spinnerGlyphs = [...]string{"✻", "✽", "✶", "✢"}

// runeWidth is the number of terminal columns r takes: 0 for combining
// marks, 2 for East Asian wide characters and most emoji, else 1.
func runeWidth(r rune) int {
	switch {
	case r == 0:
		return 0
	case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || r == 0x200B || r == 0x200D:
		return 0
	case r >= 0x1100 && r <= 0x115F, r >= 0x2E80 && r <= 0xA4CF && r != 0x303F,
		r >= 0xAC00 && r <= 0xD7A3, r >= 0xF900 && r <= 0xFAFF, r >= 0xFE30 && r <= 0xFE4F,
		r >= 0xFF00 && r <= 0xFF60, r >= 0xFFE0 && r <= 0xFFE6,
		r >= 0x1F000 && r <= 0x1FAFF, r >= 0x20000 && r <= 0x3FFFD:
		return 2
	case r >= 0x231A && r <= 0x2B55:
		// Emoji with default emoji presentation in the symbol blocks: wide
		// in tmux and glibc's wcwidth. Counting one column too many only
		// narrows a box row; too few would wrap it and break the redraw.
		for _, e := range wideSymbols {
			if r >= e[0] && r <= e[1] {
				return 2
			}
		}
	}
	return 1
}

// wideSymbols are the Emoji_Presentation ranges below U+2B56.
var wideSymbols = [...][2]rune{
	{0x231A, 0x231B}, {0x23E9, 0x23EC}, {0x23F0, 0x23F0}, {0x23F3, 0x23F3}, {0x25FD, 0x25FE},
	{0x2614, 0x2615}, {0x2648, 0x2653}, {0x267F, 0x267F}, {0x2693, 0x2693}, {0x26A1, 0x26A1},
	{0x26AA, 0x26AB}, {0x26BD, 0x26BE}, {0x26C4, 0x26C5}, {0x26CE, 0x26CE}, {0x26D4, 0x26D4},
	{0x26EA, 0x26EA}, {0x26F2, 0x26F3}, {0x26F5, 0x26F5}, {0x26FA, 0x26FA}, {0x26FD, 0x26FD},
	{0x2705, 0x2705}, {0x270A, 0x270B}, {0x2728, 0x2728}, {0x274C, 0x274C}, {0x274E, 0x274E},
	{0x2753, 0x2755}, {0x2757, 0x2757}, {0x2795, 0x2797}, {0x27B0, 0x27B0}, {0x27BF, 0x27BF},
	{0x2B1B, 0x2B1C}, {0x2B50, 0x2B50}, {0x2B55, 0x2B55},
}

// displayText makes s safe to print on one screen line: tabs become a
// space, other control characters and invalid UTF-8 become '?'.
func displayText(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '\t':
			b.WriteByte(' ')
		case r == utf8.RuneError && size == 1, r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
			b.WriteByte('?')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// truncate cuts display text s to at most width columns.
func truncate(s string, width int) string {
	w := 0
	for i, r := range s {
		rw := runeWidth(r)
		if w+rw > width {
			return s[:i]
		}
		w += rw
	}
	return s
}

// wrap splits display text s into rows of at most width columns (at least
// one row, possibly empty).
func wrap(s string, width int) []string {
	var rows []string
	start, w := 0, 0
	for i, r := range s {
		rw := runeWidth(r)
		if w+rw > width && i > start {
			rows = append(rows, s[start:i])
			start, w = i, 0
		}
		w += rw
	}
	return append(rows, s[start:])
}

// pad right-pads display text s with spaces to width columns.
func pad(s string, width int) string {
	w := 0
	for _, r := range s {
		w += runeWidth(r)
	}
	if w >= width {
		return s
	}
	return s + strings.Repeat(" ", width-w)
}

// boxLines renders the ready box for input at the given terminal width:
// a top border, "│ > " plus the first row, continuation rows starting with
// "│   ", at most maxBoxLines content rows (the last one "│   … +N lines"
// when rows are left out), and a bottom border. CR in the input is not
// shown.
func boxLines(input []byte, cols int) []string {
	cols = max(cols, 8)
	inner := cols - 2 // between the side borders
	text := inner - 2 // after "> " or "  "
	var rows []string
	for _, l := range strings.Split(string(input), "\n") {
		rows = append(rows, wrap(displayText(strings.ReplaceAll(l, "\r", "")), text-1)...)
	}
	if len(rows) > maxBoxLines {
		n := len(rows) - (maxBoxLines - 1)
		rows = append(rows[:maxBoxLines-1], fmt.Sprintf("… +%d lines", n))
	}
	out := []string{"╭" + strings.Repeat("─", inner) + "╮"}
	for i, r := range rows {
		lead := "   "
		if i == 0 {
			lead = " > "
		}
		out = append(out, "│"+pad(truncate(lead+r, inner), inner)+"│")
	}
	return append(out, "╰"+strings.Repeat("─", inner)+"╯")
}

// menuLines renders a numbered two-choice menu with ❯ on the selection.
func menuLines(question, yes, no string, sel, cols int) []string {
	mark := func(i int) string {
		if i == sel {
			return "❯ "
		}
		return "  "
	}
	return []string{
		truncate(displayText(question), cols),
		truncate(mark(0)+"1. "+yes, cols),
		truncate(mark(1)+"2. "+no, cols),
	}
}

// spinnerLine is the busy line for frame i.
func spinnerLine(i, cols int) string {
	return truncate(spinnerGlyphs[i%len(spinnerGlyphs)]+" "+spinnerText, cols)
}

// echoLine is the history line for a submitted prompt: "> " + first line,
// plus " [+N lines]" when there are more.
func echoLine(prompt string) string {
	lines := strings.Split(prompt, "\n")
	s := "> " + displayText(strings.TrimSuffix(lines[0], "\r"))
	if len(lines) > 1 {
		s += fmt.Sprintf(" [+%d lines]", len(lines)-1)
	}
	return s
}
