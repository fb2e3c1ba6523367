package agentsim

import (
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestParseLine(t *testing.T) {
	tests := []struct {
		line string
		want directive
	}{
		{"", directive{kind: dirBlank}},
		{"  \t\r", directive{kind: dirBlank}},
		{"sleep 2s", directive{kind: dirSleep, dur: 2 * time.Second}},
		{"  sleep 150ms\r", directive{kind: dirSleep, dur: 150 * time.Millisecond}},
		{"sleep well", directive{kind: dirOther, text: "sleep well"}},
		{"silent 1m", directive{kind: dirSilent, dur: time.Minute}},
		{"say hello world", directive{kind: dirSay, text: "hello world"}},
		{"say", directive{kind: dirSay}},
		{"sayonara", directive{kind: dirOther, text: "sayonara"}},
		{"write a/b.txt hi there", directive{kind: dirWrite, path: "a/b.txt", text: "hi there"}},
		{"write a.txt", directive{kind: dirWrite, path: "a.txt"}},
		{"write", directive{kind: dirOther, text: "write"}},
		{"ask Create hello.txt?", directive{kind: dirAsk, text: "Create hello.txt?"}},
		{"ask ", directive{kind: dirOther, text: "ask "}},
		{"run echo 'a b' \"c d\"", directive{kind: dirRun, argv: []string{"echo", "a b", "c d"}}},
		{"run 'unterminated", directive{kind: dirOther, text: "run 'unterminated"}},
		{"run", directive{kind: dirOther, text: "run"}},
		{"exit 3", directive{kind: dirExit, code: 3}},
		{"exit 256", directive{kind: dirOther, text: "exit 256"}},
		{"exit now", directive{kind: dirOther, text: "exit now"}},
		{"crash", directive{kind: dirCrash}},
		{"crash course", directive{kind: dirOther, text: "crash course"}},
		{"Sleep 2s", directive{kind: dirOther, text: "Sleep 2s"}},
		{"say\ttabbed", directive{kind: dirSay, text: "tabbed"}},
		{"usage 100 20", directive{kind: dirUsage, usage: [3]int64{100, 20, 0}}},
		{"usage 100 20 5 0.25", directive{kind: dirUsage, usage: [3]int64{100, 20, 5}, cost: 0.25, hasCost: true}},
		{"usage lots", directive{kind: dirOther, text: "usage lots"}},
		{"limit Usage limit reached · resets in 3s", directive{kind: dirLimit, text: "Usage limit reached · resets in 3s"}},
		{"limit ", directive{kind: dirOther, text: "limit "}},
		{"usage 1 -2", directive{kind: dirOther, text: "usage 1 -2"}},
		{"usage 1 2 3 4 5", directive{kind: dirOther, text: "usage 1 2 3 4 5"}},
	}
	for _, tt := range tests {
		if got := parseLine(tt.line); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseLine(%q) = %+v, want %+v", tt.line, got, tt.want)
		}
	}
}

func TestSplitArgs(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{"", nil, false},
		{"a  b\tc", []string{"a", "b", "c"}, false},
		{`'a b' "c 'd'" e`, []string{"a b", "c 'd'", "e"}, false},
		{`x'y z'w`, []string{"xy zw"}, false},
		{`'' b`, []string{"", "b"}, false},
		{`$(rm) ; ` + "`id`", []string{"$(rm)", ";", "`id`"}, false},
		{`"open`, nil, true},
	}
	for _, tt := range tests {
		got, err := SplitArgs(tt.in)
		if (err != nil) != tt.wantErr || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitArgs(%q) = %q, %v; want %q, err %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

// feedSplit feeds in to a fresh decoder cut at the given positions.
func feedSplit(in string, cuts ...int) []key {
	var d decoder
	var keys []key
	prev := 0
	for _, c := range append(cuts, len(in)) {
		keys = append(keys, d.feed([]byte(in[prev:c]))...)
		prev = c
	}
	keys = append(keys, d.flush()...)
	// Typed text split across reads arrives as several text keys; join them
	// (the prompt editor appends them all the same).
	var joined []key
	for _, k := range keys {
		if n := len(joined); n > 0 && k.kind == keyText && joined[n-1].kind == keyText {
			joined[n-1].data = append(joined[n-1].data, k.data...)
			continue
		}
		if k.data == nil && (k.kind == keyText || k.kind == keyPaste) {
			k.data = []byte{}
		}
		joined = append(joined, k)
	}
	return joined
}

func TestDecoderKeys(t *testing.T) {
	tests := []struct {
		in   string
		want []key
	}{
		{"ab\r", []key{{keyText, []byte("ab")}, {kind: keyEnter}}},
		{"\x1b", []key{{kind: keyEscape}}},
		{"\x1b\x1b", []key{{kind: keyEscape}, {kind: keyEscape}}},
		{"\x1b[A\x1bOB\x1b[1;5C\x1b[?1u", []key{{kind: keyUp}, {kind: keyDown}}},
		{"\x03\x04\x15\x7f\x08\n", []key{{kind: keyCtrlC}, {kind: keyCtrlD}, {kind: keyCtrlU}, {kind: keyBackspace}, {kind: keyBackspace}, {kind: keyNewline}}},
		{"x\x1b[200~a\r\nb\x1b[A\x03\x1b[201~\r", []key{{keyText, []byte("x")}, {keyPaste, []byte("a\r\nb\x1b[A\x03")}, {kind: keyEnter}}},
		{"\x1b[200~\x1b[201~", []key{{keyPaste, []byte{}}}},
		{"\x1b[200~end\x1b\x1b[201~", []key{{keyPaste, []byte("end\x1b")}}},
		{"\x1b[200~p\x1b[201\x1b[201~", []key{{keyPaste, []byte("p\x1b[201")}}},
		{"é\t", []key{{keyText, []byte("é\t")}}},
		{"\x1b1", []key{{kind: keyEscape}, {keyText, []byte("1")}}},
		{"\x1b\r", []key{{kind: keyEscape}, {kind: keyEnter}}},
		{"\x1b]11;rgb:0/0/0\x07a\x1bP1$r\x1b\\b", []key{{keyText, []byte("ab")}}},
		{"\x1b[I\x1b[O\x1b[<0;1;2M\x1b[3~c", []key{{keyText, []byte("c")}}},
	}
	for _, tt := range tests {
		// Every way of cutting the input in two must give the same keys.
		for cut := 0; cut <= len(tt.in); cut++ {
			got := feedSplit(tt.in, cut)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("decode(%q) cut at %d = %v, want %v", tt.in, cut, got, tt.want)
				break
			}
		}
	}
}

func TestDecoderSlowSplitSequence(t *testing.T) {
	var d decoder
	d.feed([]byte("\x1b"))
	got := d.flush() // the rest was slow to come: reported as Escape
	got = append(got, d.feed([]byte("[200~a\rb\x1b[201~"))...)
	want := []key{{kind: keyEscape}, {keyPaste, []byte("a\rb")}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("paste after a flushed ESC = %v, want %v", got, want)
	}
	d.feed([]byte("\x1b"))
	got = d.flush()
	d.expire() // the grace period passed: "[" is typed text
	got = append(got, d.feed([]byte("[x"))...)
	want = []key{{kind: keyEscape}, {keyText, []byte("[x")}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("typing after an expired Escape = %v, want %v", got, want)
	}
}

func TestDecoderPasteByteByByte(t *testing.T) {
	text := "日本語 é 🎉\r\n\tline; $(x) `y` \x1b[201 \x1b[200~ end"
	in := "\x1b[200~" + text + "\x1b[201~"
	cuts := make([]int, 0, len(in))
	for i := 1; i < len(in); i++ {
		cuts = append(cuts, i)
	}
	got := feedSplit(in, cuts...)
	if len(got) != 1 || got[0].kind != keyPaste || string(got[0].data) != text {
		t.Fatalf("byte-by-byte paste = %v, want one paste of %q", got, text)
	}
}

func TestBackspace(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""}, {"ab", "a"}, {"aé", "a"}, {"a🎉", "a"}, {"a\xc3", "a"},
	}
	for _, tt := range tests {
		if got := string(backspace([]byte(tt.in))); got != tt.want {
			t.Errorf("backspace(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestBoxLines(t *testing.T) {
	width := func(s string) int {
		w := 0
		for _, r := range s {
			w += runeWidth(r)
		}
		return w
	}
	tests := []struct {
		input string
		cols  int
		want  []string
	}{
		{"", 10, []string{"╭────────╮", "│ >      │", "╰────────╯"}},
		{"hi", 10, []string{"╭────────╮", "│ > hi   │", "╰────────╯"}},
		{"a\nb", 10, []string{"╭────────╮", "│ > a    │", "│   b    │", "╰────────╯"}},
		{"abcdefg", 10, []string{"╭────────╮", "│ > abcde│", "│   fg   │", "╰────────╯"}},
		{"日本語", 10, []string{"╭────────╮", "│ > 日本 │", "│   語   │", "╰────────╯"}},
		{"1\n2\n3\n4\n5\n6\n7\n8", 16, []string{"╭──────────────╮", "│ > 1          │", "│   2          │", "│   3          │", "│   4          │", "│   5          │", "│   … +3 lines │", "╰──────────────╯"}},
	}
	for _, tt := range tests {
		got := boxLines([]byte(tt.input), tt.cols)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("boxLines(%q, %d) =\n%s\nwant\n%s", tt.input, tt.cols, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
		}
		for _, l := range got {
			if width(l) > tt.cols {
				t.Errorf("boxLines(%q, %d): line %q is wider than the terminal", tt.input, tt.cols, l)
			}
		}
	}
}

func TestRuneWidth(t *testing.T) {
	tests := []struct {
		r    rune
		want int
	}{
		{'a', 1}, {'é', 1}, {'\u0301', 0}, {'日', 2}, {'한', 2}, {'🎉', 2}, {'✅', 2}, {'⚡', 2},
		{'✻', 1}, {'❯', 1}, {'─', 1}, {'…', 1}, {'ｱ', 1}, {'Ａ', 2},
	}
	for _, tt := range tests {
		if got := runeWidth(tt.r); got != tt.want {
			t.Errorf("runeWidth(%q) = %d, want %d", tt.r, got, tt.want)
		}
	}
}

func TestEchoAndDisplay(t *testing.T) {
	tests := []struct{ in, want string }{
		{"hello", "> hello"},
		{"a\r\nb\nc", "> a [+2 lines]"},
		{"x\ty\x1b[31m\xff", "> x y?[31m?"},
	}
	for _, tt := range tests {
		if got := echoLine(tt.in); got != tt.want {
			t.Errorf("echoLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if !utf8.ValidString(echoLine(tt.in)) {
			t.Errorf("echoLine(%q) is not valid UTF-8", tt.in)
		}
	}
}
