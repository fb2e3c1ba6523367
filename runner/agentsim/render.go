package agentsim

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
)

// screen draws the TUI as a scrolling history with a live area (prompt box,
// spinner or menu) that is redrawn in place and kept on the last rows of
// the terminal: start moves the cursor to the last row, and when the live
// area shrinks, blank history lines make up the difference, so whatever is
// drawn last always ends on the bottom row. After every write the cursor
// sits at the end of the last live line, or at the start of an empty line
// when the live area is empty. Live lines never exceed the width, so their
// count is the number of rows they take.
type screen struct {
	w          io.Writer
	cols, rows int
	live       []string
	hist       []string // the last historyKeep history lines, for repaint
	err        error    // the first write error
}

// start moves the cursor to the bottom row, scrolling whatever is on the
// screen up by one line so the row is empty.
func (sc *screen) start() {
	var b bytes.Buffer
	fmt.Fprintf(&b, "\x1b[%d;1H\n", sc.rows)
	sc.flush(&b)
}

func (sc *screen) flush(b *bytes.Buffer) {
	if sc.err != nil || b.Len() == 0 {
		return
	}
	_, sc.err = sc.w.Write(b.Bytes())
}

// update adds hist lines to the history and replaces the live area with
// live (nil removes it).
func (sc *screen) update(hist, live []string) {
	if len(hist) == 0 && slices.Equal(live, sc.live) {
		return
	}
	var b bytes.Buffer
	if n := len(sc.live); n > 0 {
		// Back to the first row of the live area; erase it and below.
		b.WriteByte('\r')
		if n > 1 {
			fmt.Fprintf(&b, "\x1b[%dA", n-1)
		}
		b.WriteString("\x1b[J")
	}
	if pad := len(sc.live) - len(hist) - len(live); pad > 0 {
		b.WriteString(strings.Repeat("\r\n", pad))
	}
	sc.writeLines(&b, hist, live)
	sc.hist = append(sc.hist, hist...)
	if n := len(sc.hist) - historyKeep; n > 0 {
		sc.hist = slices.Delete(sc.hist, 0, n)
	}
	sc.flush(&b)
}

// writeLines writes hist (each line ended) then the live area (its last
// line not ended: the cursor stays on it), which it keeps as the screen's.
func (sc *screen) writeLines(b *bytes.Buffer, hist, live []string) {
	for _, l := range hist {
		b.WriteString(l)
		b.WriteString("\r\n")
	}
	for i, l := range live {
		if i > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString(l)
	}
	sc.live = slices.Clone(live)
}

// setLive replaces the live area with lines (nil removes it).
func (sc *screen) setLive(lines []string) { sc.update(nil, lines) }

// print adds lines to the history above the live area.
func (sc *screen) print(lines ...string) { sc.update(lines, sc.live) }

// repaint redraws the whole screen with the live area live (after a
// resize, when the terminal may have rewrapped what is on it): the last
// history lines that fit, then the live area, ending on the bottom row.
func (sc *screen) repaint(live []string) {
	var b bytes.Buffer
	b.WriteString("\x1b[H\x1b[2J")
	used := len(live)
	first := len(sc.hist)
	for first > 0 {
		h := rowsOf(sc.hist[first-1], sc.cols)
		if used+h > sc.rows {
			break
		}
		used += h
		first--
	}
	fmt.Fprintf(&b, "\x1b[%d;1H", max(sc.rows-used+1, 1))
	sc.writeLines(&b, sc.hist[first:], live)
	sc.flush(&b)
}

// rowsOf is the number of terminal rows display text s takes at cols.
func rowsOf(s string, cols int) int {
	w := 0
	for _, r := range s {
		w += runeWidth(r)
	}
	return max(1, (w+cols-1)/max(cols, 1))
}
