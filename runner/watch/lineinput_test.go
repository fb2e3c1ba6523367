package watch

import (
	"testing"

	tea "charm.land/bubbletea/v2"
)

func TestLineInput(t *testing.T) {
	key := func(s string) tea.KeyPressMsg {
		switch s {
		case "left":
			return tea.KeyPressMsg{Code: tea.KeyLeft}
		case "home":
			return tea.KeyPressMsg{Code: tea.KeyHome}
		case "end":
			return tea.KeyPressMsg{Code: tea.KeyEnd}
		case "backspace":
			return tea.KeyPressMsg{Code: tea.KeyBackspace}
		case "delete":
			return tea.KeyPressMsg{Code: tea.KeyDelete}
		case "ctrl+w":
			return tea.KeyPressMsg{Code: 'w', Mod: tea.ModCtrl}
		case "ctrl+u":
			return tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl}
		case "ctrl+k":
			return tea.KeyPressMsg{Code: 'k', Mod: tea.ModCtrl}
		}
		return tea.KeyPressMsg{Code: []rune(s)[0], Text: s}
	}
	for _, c := range []struct {
		name, start string
		keys        []string
		want        string
		pos         int
	}{
		{"typed", "", []string{"a", "b", "é"}, "abé", 3},
		{"inserted at the cursor", "ac", []string{"left", "b"}, "abc", 2},
		{"backspace and delete", "abcd", []string{"left", "backspace", "home", "delete"}, "bd", 0},
		{"backspace at the start", "ab", []string{"home", "backspace"}, "ab", 0},
		{"ctrl+w a word", "add tests now", []string{"ctrl+w"}, "add tests ", 10},
		{"ctrl+u before, ctrl+k after", "one two", []string{"left", "left", "left", "ctrl+k", "home", "ctrl+u"}, "one ", 0},
		{"a control is not typed", "", []string{"\x1b", "x"}, "x", 1},
		{"end", "ab", []string{"home", "end", "c"}, "abc", 3},
	} {
		var in lineInput
		in.SetValue(c.start)
		in.CursorEnd()
		for _, k := range c.keys {
			in.Update(key(k))
		}
		if in.Value() != c.want || in.pos != c.pos {
			t.Errorf("%s: %q at %d, want %q at %d", c.name, in.Value(), in.pos, c.want, c.pos)
		}
	}
	var in lineInput
	in.SetValue("ab")
	if in.View() != "ab" {
		t.Errorf("unfocused view %q", in.View())
	}
	in.Focus()
	if v := in.View(); v == "ab" || len(v) < 3 {
		t.Errorf("focused view %q shows no cursor", v)
	}
	in.Reset()
	if in.Value() != "" || in.pos != 0 {
		t.Errorf("after Reset: %q at %d", in.Value(), in.pos)
	}
}
