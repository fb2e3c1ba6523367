package textutil

import "strings"

// lineBreaks turns every line break a terminal, an editor or a model may
// take for one into "\n": CR LF, CR, LF, VT, FF, NEL and the Unicode line
// and paragraph separators.
var lineBreaks = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\v", "\n", "\f", "\n",
	"\u0085", "\n", "\u2028", "\n", "\u2029", "\n")

// Lines splits s into its lines at every line break of lineBreaks: the
// one splitter for text that quotes or frames what an agent wrote (a
// message's frame, a ballot's quotes), so that no line of it can start
// where the frame's own lines do.
func Lines(s string) []string {
	return strings.Split(lineBreaks.Replace(s), "\n")
}
