package dialog

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/profile"
)

// Dialog is a dialog an agent shows: what it asks, its options and the
// digest of both (see the package doc).
type Dialog struct {
	Digest   string   `json:"digest"`
	Question string   `json:"question"`
	Options  []Option `json:"options"`
	// Keyed says the options are no numbered menu but keys the profile's
	// key_options read (a confirm's "[y] Yes   [n] No"): an answer
	// presses the option's key, not a menu's cursor.
	Keyed bool `json:"keyed,omitempty"`
}

// Option is one numbered choice of a dialog's menu: Key is its number as
// shown ("1"), Label its text without the cursor marker ("Yes"); or, in a
// keyed dialog, the key that chooses it ("y") and what it says.
type Option struct {
	Key   string `json:"key"`
	Label string `json:"label"`
}

// Option returns the option whose key is key.
func (d Dialog) Option(key string) (Option, bool) {
	for _, o := range d.Options {
		if o.Key == key {
			return o, true
		}
	}
	return Option{}, false
}

// Read returns the dialog on screen as profile p sees it; ok is false when
// p does not detect one (the screen is not needs_input). A dialog whose
// menu cannot be read has no options.
func Read(p *profile.Profile, screen string) (Dialog, bool) {
	d := profile.Detect(p, screen)
	if d.State != profile.StateNeedsInput {
		return Dialog{}, false
	}
	q := d.Question
	if q == "" {
		q = d.Line
	}
	lines := clean(screen)
	opts := menu(lines, q)
	keyed := false
	if len(opts) == 0 {
		for _, o := range profile.KeyOptions(p, lines[dialogTop(lines, q):]) {
			opts = append(opts, Option(o))
		}
		keyed = len(opts) > 0
	}
	return Dialog{
		Digest:   digest(p, q, opts),
		Question: profile.DialogLine(p, q),
		Options:  opts,
		Keyed:    keyed,
	}, true
}

// Options reads the numbered menu nearest the bottom of screen: the last
// line "1. …" (after an optional cursor marker ❯ › > ●, inside box
// borders) and the lines "2. …", "3. …" under it, in order. A line
// between two options that is not one (a wrapped label) is skipped; a
// blank line or another number ends the menu.
func Options(screen string) []Option { return menu(clean(screen), "") }

// menu reads the menu of lines (see Options) at or below the dialog's
// text q: from the last line that is q's first (a numbered list above a
// dialog, such as a CLI's tips, is no menu of it); all of lines when q
// is not found.
func menu(lines []string, q string) []Option {
	from := dialogTop(lines, q)
	first := -1
	for i := len(lines) - 1; i >= from; i-- {
		if k, _, ok := item(lines[i]); ok && k == "1" {
			first = i
			break
		}
	}
	if first < 0 {
		return nil
	}
	var out []Option
	next := 1
	for _, l := range lines[first:] {
		k, label, ok := item(l)
		switch {
		case ok && k == itoa(next):
			out = append(out, Option{Key: k, Label: label})
			next++
		case ok, strings.TrimSpace(l) == "":
			return out
		}
	}
	return out
}

// dialogTop is the index of the last of lines that is the first of the
// dialog's text q (0 when none is).
func dialogTop(lines []string, q string) int {
	if head := strings.TrimFunc(strings.SplitN(q, "\n", 2)[0], isBorder); head != "" {
		for i := len(lines) - 1; i >= 0; i-- {
			if lines[i] == head {
				return i
			}
		}
	}
	return 0
}

// item parses a menu line: its key and label.
func item(l string) (key, label string, ok bool) {
	m := menuLine.Re().FindStringSubmatch(l)
	if m == nil {
		return "", "", false
	}
	return m[1], strings.Join(strings.Fields(m[2]), " "), true
}

// menuLine is a numbered choice: a cursor marker maybe, the number, a dot,
// the label.
var menuLine = textutil.LazyRegexp(`^\s*(?:[❯›>●]\s*)?(\d{1,2})\.\s+(\S.*?)\s*$`)

// clean is screen's lines without escapes and box borders.
func clean(screen string) []string {
	lines := strings.Split(textutil.StripEscapes(screen), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimFunc(l, isBorder)
	}
	return lines
}

func isBorder(r rune) bool {
	return r == ' ' || r == '\t' || r == '\r' || r == '│' || r == '┃' || r == '\u200b' || r == '\u00a0'
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return string(rune('0'+n/10)) + string(rune('0'+n%10))
}

// digest hashes the dialog's text q (menu lines, volatile lines and
// blanks left out, spaces collapsed) and its options.
func digest(p *profile.Profile, q string, opts []Option) string {
	h := sha256.New()
	for _, l := range strings.Split(profile.MaskVolatile(p, q), "\n") {
		l = strings.Join(strings.Fields(strings.TrimFunc(l, isBorder)), " ")
		if l == "" || strings.HasPrefix(l, "\x00") {
			continue
		}
		if _, _, ok := item(l); ok {
			continue
		}
		h.Write([]byte("q\x00" + l + "\n"))
	}
	for _, o := range opts {
		h.Write([]byte("o\x00" + o.Key + "\x00" + o.Label + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
