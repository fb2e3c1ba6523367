package textutil

import "strings"

// Wrap breaks s into lines of at most width columns (counted in runes) at
// spaces; a word longer than width stands on its own line.
func Wrap(s string, width int) string {
	var b strings.Builder
	col := 0
	for _, w := range strings.Fields(s) {
		n := len([]rune(w))
		switch {
		case col == 0:
		case col+1+n > width:
			b.WriteByte('\n')
			col = 0
		default:
			b.WriteByte(' ')
			col++
		}
		b.WriteString(w)
		col += n
	}
	return b.String()
}
