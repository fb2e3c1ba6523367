package textutil

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Visible returns s with every control character that could act on a
// terminal shown instead: C0 controls but tab and newline as caret
// notation (ESC as ^[, CR as ^M, BEL as ^G), DEL as ^?, C1 controls
// (U+0080–U+009F) as their 7-bit form (CSI as ^[[), and bytes that are not
// UTF-8 as \xNN. Text from a task, an agent or a message shown to a person
// goes through it: "ESC]52;c;…BEL" would write the clipboard, "ESC]0;…" the
// title, "ESC[2J" clear the screen.
func Visible(s string) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	appendVisible(&b, []byte(s), true)
	return b.String()
}

// VisibleLine is Visible, with newlines and tabs shown as spaces too: one
// line of a table.
func VisibleLine(s string) string {
	return strings.NewReplacer("\n", " ", "\t", " ").Replace(Visible(s))
}

// isPlain reports whether s has nothing Visible would change.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\t' && c != '\n' || c >= 0x7f {
			return false
		}
	}
	return true
}

// appendVisible writes p made visible to b and returns how many bytes of
// p's end it left: an incomplete UTF-8 sequence, when final is false (the
// rest may come with the next write).
func appendVisible(b *strings.Builder, p []byte, final bool) int {
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\t' || c == '\n' || c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
			i++
			continue
		case c < 0x20:
			b.WriteByte('^')
			b.WriteByte(c + 0x40)
			i++
			continue
		case c == 0x7f:
			b.WriteString("^?")
			i++
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && size <= 1 {
			if !final && !utf8.FullRune(p[i:]) {
				return len(p) - i
			}
			fmt.Fprintf(b, `\x%02x`, c)
			i++
			continue
		}
		if r >= 0x80 && r < 0xa0 {
			b.WriteString("^[")
			b.WriteByte(byte(r - 0x40))
		} else {
			b.Write(p[i : i+size])
		}
		i += size
	}
	return 0
}

// VisibleWriter passes what is written to W made visible (see Visible),
// keeping an incomplete UTF-8 sequence at the end of a write for the next
// one. Flush writes what it kept (made visible as bytes).
type VisibleWriter struct {
	W    io.Writer
	tail []byte
}

// NewVisibleWriter returns a VisibleWriter writing to w.
func NewVisibleWriter(w io.Writer) *VisibleWriter { return &VisibleWriter{W: w} }

// Write makes p visible and writes it. It reports len(p) on success.
func (v *VisibleWriter) Write(p []byte) (int, error) {
	buf := p
	if len(v.tail) > 0 {
		buf = append(v.tail, p...)
		v.tail = nil
	}
	if isPlain(string(buf)) {
		if _, err := v.W.Write(buf); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	var b strings.Builder
	b.Grow(len(buf) + 8)
	left := appendVisible(&b, buf, false)
	if left > 0 {
		v.tail = append([]byte(nil), buf[len(buf)-left:]...)
	}
	if _, err := io.WriteString(v.W, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes the incomplete sequence kept from the last write, if any.
func (v *VisibleWriter) Flush() error {
	if len(v.tail) == 0 {
		return nil
	}
	var b strings.Builder
	appendVisible(&b, v.tail, true)
	v.tail = nil
	_, err := io.WriteString(v.W, b.String())
	return err
}
