package watch

import (
	"strings"

	tea "charm.land/bubbletea/v2"
)

// lineInput is the one line typed at the bottom (the filter, a new task's
// project, agent and text): runes and a cursor, with the keys a shell's
// line has (left, right, home/ctrl+a, end/ctrl+e, backspace, delete,
// ctrl+u, ctrl+k, ctrl+w, alt+left/right by word). It stands in for bubbles'
// textinput, which linked a clipboard package whose init looks for xclip,
// xsel and termux in every directory of $PATH in every runner process, a
// hook's and a `runner ps`'s too (issue 51: 5% of `runner version`'s CPU
// with runewidth's init).
type lineInput struct {
	value   []rune
	pos     int // the cursor: before value[pos]
	focused bool
}

// Reset empties the line.
func (in *lineInput) Reset() { in.value, in.pos = nil, 0 }

// SetValue replaces the line, the cursor kept where it fits.
func (in *lineInput) SetValue(s string) {
	in.value = []rune(s)
	in.pos = min(in.pos, len(in.value))
}

// CursorEnd puts the cursor after the last rune.
func (in *lineInput) CursorEnd() { in.pos = len(in.value) }

// Focus shows the cursor.
func (in *lineInput) Focus() tea.Cmd {
	in.focused = true
	return nil
}

// Blur hides the cursor.
func (in *lineInput) Blur() { in.focused = false }

// Value is the line typed.
func (in *lineInput) Value() string { return string(in.value) }

// View is the line with the cursor shown (reverse video) when focused.
func (in *lineInput) View() string {
	if !in.focused {
		return string(in.value)
	}
	at := " "
	if in.pos < len(in.value) {
		at = string(in.value[in.pos])
	}
	var b strings.Builder
	b.WriteString(string(in.value[:in.pos]))
	b.WriteString(styleSel.Render(at))
	if in.pos < len(in.value) {
		b.WriteString(string(in.value[in.pos+1:]))
	}
	return b.String()
}

// Update applies a key to the line.
func (in *lineInput) Update(k tea.KeyPressMsg) {
	switch k.String() {
	case "left", "ctrl+b":
		in.pos = max(in.pos-1, 0)
	case "right", "ctrl+f":
		in.pos = min(in.pos+1, len(in.value))
	case "home", "ctrl+a":
		in.pos = 0
	case "end", "ctrl+e":
		in.pos = len(in.value)
	case "alt+left", "alt+b", "ctrl+left":
		in.pos = in.wordStart()
	case "alt+right", "alt+f", "ctrl+right":
		in.pos = in.wordEnd()
	case "backspace", "ctrl+h":
		if in.pos > 0 {
			in.cut(in.pos-1, in.pos)
		}
	case "delete", "ctrl+d":
		if in.pos < len(in.value) {
			in.cut(in.pos, in.pos+1)
		}
	case "ctrl+u":
		in.cut(0, in.pos)
	case "ctrl+k":
		in.cut(in.pos, len(in.value))
	case "ctrl+w", "alt+backspace":
		in.cut(in.wordStart(), in.pos)
	default:
		if k.Text != "" && k.Mod&^tea.ModShift == 0 {
			in.insert([]rune(k.Text))
		}
	}
}

func (in *lineInput) insert(r []rune) {
	var keep []rune
	for _, c := range r {
		if c >= 0x20 && c != 0x7f { // a control never enters the line
			keep = append(keep, c)
		}
	}
	in.value = append(in.value[:in.pos], append(keep, in.value[in.pos:]...)...)
	in.pos += len(keep)
}

// cut removes value[from:to] and leaves the cursor at from.
func (in *lineInput) cut(from, to int) {
	in.value = append(in.value[:from], in.value[to:]...)
	in.pos = from
}

// wordStart is where the word before the cursor starts (spaces before it
// skipped).
func (in *lineInput) wordStart() int {
	i := in.pos
	for i > 0 && in.value[i-1] == ' ' {
		i--
	}
	for i > 0 && in.value[i-1] != ' ' {
		i--
	}
	return i
}

// wordEnd is where the word after the cursor ends.
func (in *lineInput) wordEnd() int {
	i := in.pos
	for i < len(in.value) && in.value[i] == ' ' {
		i++
	}
	for i < len(in.value) && in.value[i] != ' ' {
		i++
	}
	return i
}
