package textutil

import "strings"

// StripEscapes removes terminal escape sequences (CSI, OSC, DCS and other
// ESC sequences) from s: the text a screen or a transcript shows. (Visible
// shows the controls instead: for text a person reads.)
func StripEscapes(s string) string {
	i := strings.IndexByte(s, 0x1b)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i >= 0 {
		b.WriteString(s[:i])
		s = s[i+1:]
		switch {
		case s == "":
		case s[0] == '[': // CSI: parameters, then a final byte @-~
			j := 1
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			s = s[min(j+1, len(s)):]
		case s[0] == ']' || s[0] == 'P' || s[0] == '_' || s[0] == '^': // strings: up to BEL or ESC \
			j := strings.IndexAny(s, "\a\x1b")
			switch {
			case j < 0:
				s = ""
			case s[j] == '\a':
				s = s[j+1:]
			default:
				s = s[min(j+2, len(s)):]
			}
		default: // intermediates 0x20-0x2f, then a final byte (ESC =, ESC 7, ESC ( B, ESC # 8, ESC SP F)
			j := 0
			for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
				j++
			}
			s = s[min(j+1, len(s)):]
		}
		i = strings.IndexByte(s, 0x1b)
	}
	b.WriteString(s)
	return b.String()
}
