package textutil

import (
	"strings"
	"unicode/utf8"
)

// Lines splits s into its lines at every line break a terminal, an editor
// or a model may take for one: CR LF (once), CR, LF, VT, FF, NEL and the
// Unicode line and paragraph separators. It is the one splitter for text
// that quotes or frames what an agent wrote (a message's frame, a
// ballot's quotes), so that no line of it can start where the frame's own
// lines do. (A loop, not a strings.Replacer: a package-level Replacer is
// made in the package's init, in every runner process.)
func Lines(s string) []string {
	out := make([]string, 0, strings.Count(s, "\n")+1)
	start := 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\r':
			if strings.HasPrefix(s[i+1:], "\n") {
				n = 2
			}
			fallthrough
		case '\n', '\v', '\f', '\u0085', '\u2028', '\u2029':
			out = append(out, s[start:i])
			start = i + n
		}
		i += n
	}
	return append(out, s[start:])
}
