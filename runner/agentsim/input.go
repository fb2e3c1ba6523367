package agentsim

import (
	"bytes"
	"unicode/utf8"
)

// keyKind is what one decoded input event means.
type keyKind int

const (
	keyText      keyKind = iota // typed bytes (printable, tab, UTF-8), data holds them
	keyPaste                    // a whole bracketed paste, data holds it verbatim
	keyEnter                    // CR outside a paste: submit / select
	keyNewline                  // LF (C-j) outside a paste: a newline in the input
	keyEscape                   // a lone ESC
	keyCtrlC                    // 0x03
	keyCtrlD                    // 0x04
	keyCtrlU                    // 0x15: clear the input
	keyBackspace                // 0x7f or 0x08
	keyUp                       // ESC[A or ESC O A
	keyDown                     // ESC[B or ESC O B
)

// key is one decoded input event.
type key struct {
	kind keyKind
	data []byte
}

const (
	pasteStart = "\x1b[200~"
	pasteEnd   = "\x1b[201~"
)

// decoder turns the raw byte stream of a terminal into key events. It keeps
// its state across reads, so escape sequences, paste markers and UTF-8
// sequences may be split anywhere. Unknown escape sequences are dropped.
type decoder struct {
	state   int // decNormal, decEsc, decCSI, decSS3, decPaste
	seq     []byte
	paste   []byte
	pasting bool
}

const (
	decNormal = iota
	decEsc    // saw ESC
	decCSI    // inside ESC [ …
	decSS3    // saw ESC O
	decString // inside ESC ] / ESC P / ESC _ / ESC ^ … up to BEL or ESC \
	// decFlushed: a lone ESC was just reported as the Escape key. If "[" comes
	// next (before expire), the ESC was the start of a sequence split across
	// slow reads after all: the sequence is still decoded, so a paste whose
	// marker was split this way is not lost.
	decFlushed
)

// pendingEsc reports whether the decoder holds a lone ESC that becomes an
// Escape key unless more bytes of a sequence follow soon.
func (d *decoder) pendingEsc() bool { return !d.pasting && d.state == decEsc }

// flush turns a pending lone ESC into an Escape key.
func (d *decoder) flush() []key {
	if d.pendingEsc() {
		d.state = decFlushed
		return []key{{kind: keyEscape}}
	}
	return nil
}

// expire ends the grace period after flush in which "[" still continues
// the flushed ESC.
func (d *decoder) expire() {
	if d.state == decFlushed {
		d.state = decNormal
	}
}

// feed decodes the next chunk of input.
func (d *decoder) feed(b []byte) []key {
	var out []key
	for i := 0; i < len(b); i++ {
		if d.pasting {
			i = d.feedPaste(b, i, &out)
			continue
		}
		if d.step(b[i], &out) {
			i-- // the byte begins the next key: read it again
		}
	}
	return out
}

// feedPaste takes the bytes of a bracketed paste from b[i] on, adding the
// paste to out once its end marker is read, and returns the index of the
// last byte it took.
func (d *decoder) feedPaste(b []byte, i int, out *[]key) int {
	c := b[i]
	if c != 0x1b && !pasteEndPrefix(d.paste) {
		// Fast path: copy everything up to the next ESC verbatim.
		j := bytes.IndexByte(b[i:], 0x1b)
		if j < 0 {
			j = len(b) - i
		}
		d.paste = append(d.paste, b[i:i+j]...)
		return i + j - 1
	}
	// Byte by byte while the tail may be (part of) the end marker,
	// which can be split across reads.
	d.paste = append(d.paste, c)
	if bytes.HasSuffix(d.paste, []byte(pasteEnd)) {
		p := d.paste[:len(d.paste)-len(pasteEnd)]
		*out = append(*out, key{kind: keyPaste, data: append([]byte(nil), p...)})
		d.paste = d.paste[:0]
		d.pasting = false
	}
	return i
}

// controlKey is the key a byte is of its own outside a paste and an
// escape sequence (ok false: other control bytes are dropped). A switch,
// not a package-level map built in every process's init.
func controlKey(c byte) (k keyKind, ok bool) {
	switch c {
	case '\r':
		return keyEnter, true
	case '\n':
		return keyNewline, true
	case 0x03:
		return keyCtrlC, true
	case 0x04:
		return keyCtrlD, true
	case 0x15:
		return keyCtrlU, true
	case 0x7f, 0x08:
		return keyBackspace, true
	}
	return 0, false
}

// step takes one byte outside a paste, adding the keys it completes to
// out; it reports whether the byte must be read again (it ends an escape
// sequence that turned out to be a lone Escape, and begins something else).
func (d *decoder) step(c byte, out *[]key) (reread bool) {
	switch d.state {
	case decNormal:
		if k, ok := controlKey(c); ok {
			*out = append(*out, key{kind: k})
		} else if c == 0x1b {
			d.state = decEsc
			d.seq = d.seq[:0]
		} else if c == '\t' || c >= 0x20 {
			appendText(out, c)
		}
	case decEsc:
		switch c {
		case '[':
			d.state = decCSI
			d.seq = d.seq[:0]
		case 'O':
			d.state = decSS3
		case ']', 'P', '_', '^':
			d.state = decString // OSC, DCS, APC, PM: skipped
		default:
			// A lone Escape followed by another key in the same read
			// (there is no Alt+key here): the Escape, then that key.
			*out = append(*out, key{kind: keyEscape})
			d.state = decNormal
			return true
		}
	case decFlushed:
		if c == '[' {
			d.state = decCSI
			d.seq = d.seq[:0]
		} else {
			d.state = decNormal
			return true
		}
	case decString:
		switch {
		case c == 0x07:
			d.state = decNormal
		case c == 0x1b:
			d.seq = append(d.seq[:0], c)
		case c == '\\' && len(d.seq) == 1 && d.seq[0] == 0x1b:
			d.state = decNormal
		default:
			d.seq = d.seq[:0]
		}
	case decSS3:
		d.state = decNormal
		switch c {
		case 'A':
			*out = append(*out, key{kind: keyUp})
		case 'B':
			*out = append(*out, key{kind: keyDown})
		}
	case decCSI:
		d.seq = append(d.seq, c)
		if c >= 0x40 && c <= 0x7e { // final byte
			d.state = decNormal
			switch string(d.seq) {
			case "200~":
				d.pasting = true
				d.paste = d.paste[:0]
			case "A":
				*out = append(*out, key{kind: keyUp})
			case "B":
				*out = append(*out, key{kind: keyDown})
			}
		} else if c < 0x20 || len(d.seq) > 64 {
			d.state = decNormal // malformed: drop it
		}
	}
	return false
}

// appendText adds c to the text key at the end of out, or starts one.
func appendText(out *[]key, c byte) {
	if n := len(*out); n > 0 && (*out)[n-1].kind == keyText {
		(*out)[n-1].data = append((*out)[n-1].data, c)
		return
	}
	*out = append(*out, key{kind: keyText, data: []byte{c}})
}

// pasteEndPrefix reports whether the tail of p is a proper prefix of the
// paste end marker (so more bytes may complete it).
func pasteEndPrefix(p []byte) bool {
	for n := min(len(pasteEnd)-1, len(p)); n > 0; n-- {
		if bytes.HasSuffix(p, []byte(pasteEnd[:n])) {
			return true
		}
	}
	return false
}

// backspace removes the last rune of b (or the last byte of an incomplete
// UTF-8 tail).
func backspace(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	_, size := utf8.DecodeLastRune(b)
	return b[:len(b)-size]
}
