// One scanner for every CLI's record: the record's last MiBs, a line at a
// time, decoded by the CLI's format; the reading starts over at each
// prompt of the turn asked for, and what the turn used is summed at the end.

package spend

import (
	"bytes"
	"strconv"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/tailfile"
	"github.com/runner-cli/runner/runner/profile"
)

// A format is how a CLI writes its record, a JSON line at a time.
type format struct {
	// decode reads one line (white space trimmed): what it tells of a
	// turn; ok false for a line that tells nothing.
	decode func(raw []byte, q query) (e entry, ok bool)
	// skip tells, without decoding it, a line that tells nothing (most of
	// a long record: tool calls and their output). nil: none is skipped.
	skip func(raw []byte) bool
	// late is for a record whose prompt lines are written late at times
	// (Claude Code's: after the turn's first answers). A line's place is
	// then its "timestamp", then its place in the file; late tells,
	// without decoding it, a line that is not decoded before the turn's
	// prompt is found (wait), and an answer that may stand before its
	// prompt (early): kept until the next prompt, it counts if its place
	// is after that prompt's. nil: the file's order is the turn's.
	late func(raw []byte) (wait, early bool)
	// totals: a line's usage is the session's running total (Codex's):
	// the turn's is the last less the one before the turn began. Else the
	// usage of the turn's lines is summed, the last line of an id once.
	totals bool
}

// query is the turn asked for: the prompt that holds sig ("" for the
// last prompt), or the CLI's own id of the turn.
type query struct{ sig, turn string }

// An entry is what a line of a record tells of a turn.
type entry struct {
	// prompt: a user's prompt; begins: the turn asked for begins here
	// (its prompt, or the CLI's start of it): the reading starts over.
	prompt, begins bool
	// answer: text is the turn's answer so far.
	answer bool
	text   string
	// usage is what the line says was used, when it says: the last line
	// of an id counts ("" is an id of its own), or the session's total.
	usage *profile.Usage
	id    string
	end   endMark
}

// endMark is what a line tells of the turn's end.
type endMark uint8

const (
	noEnd        endMark = iota
	ends                 // the turn has ended
	goesOn               // the turn goes on (an end before this line was not the last)
	endsAnswered         // the turn has ended, if an answer came since its prompt
	callsTool            // the turn goes on, and no answer came yet: a tool call, with any text before it, is not one
)

// maxEarly bounds the answers kept, undecoded, until the next prompt line
// (one written late comes a few lines after its answers).
const maxEarly = 64

// scanTurn reads the turn q asks for from the record at path, written in
// format f.
func scanTurn(path string, f format, q query) turnRecord {
	s := turnScan{f: f, q: q}
	n := 0
	_ = tailfile.Lines(path, spendWindow, func(l tailfile.Line) bool {
		s.line(bytes.TrimSpace(l.Text), n)
		n++
		return true
	})
	return s.result()
}

// turnScan is scanTurn's reading so far.
type turnScan struct {
	f format
	q query

	out               turnRecord // the answer and the end; the usage is summed at the end
	started, answered bool
	from, last        place // the turn's beginning, the latest line
	msgs              lastByID[profile.Usage]
	total, before     profile.Usage // a running total: the latest, and the one as the turn began
	counted           bool          // a total came since the turn began
	pending           []earlyLine
}

// earlyLine is an answer that may stand before its prompt, not decoded.
type earlyLine struct {
	raw []byte
	at  place
}

// line reads the n-th line, raw.
func (s *turnScan) line(raw []byte, n int) {
	if s.f.skip != nil && s.f.skip(raw) {
		return
	}
	at := place{n: n}
	if s.f.late != nil {
		if at.at = lineTime(raw); at.at.IsZero() {
			at.at = s.last.at // no timestamp: the place in the file
		}
		s.last = at
		wait, early := s.f.late(raw)
		if early && len(s.pending) < maxEarly {
			s.pending = append(s.pending, earlyLine{bytes.Clone(raw), at})
		}
		if wait && !s.started {
			return // decoded if its prompt comes late
		}
	}
	e, ok := s.f.decode(raw, s.q)
	switch {
	case !ok:
	case e.prompt || e.begins:
		if e.begins {
			s.begin(at)
		}
		s.pending = s.pending[:0]
	default:
		s.take(e, at)
	}
}

// begin starts the turn over at place at: the answers kept that come
// after it count.
func (s *turnScan) begin(at place) {
	s.out, s.started, s.answered, s.from = turnRecord{}, true, false, at
	s.msgs, s.before, s.counted = lastByID[profile.Usage]{}, s.total, false
	for _, p := range s.pending {
		if !p.at.after(at) {
			continue // the turn's before: not decoded
		}
		if e, ok := s.f.decode(p.raw, s.q); ok && !e.prompt && !e.begins {
			s.take(e, p.at)
		}
	}
}

// take reads a line that is not a prompt, at place at.
func (s *turnScan) take(e entry, at place) {
	if e.usage != nil && s.f.totals {
		s.total, s.counted = *e.usage, s.counted || s.started
		e.usage = nil
	}
	if !s.started || !at.after(s.from) {
		return
	}
	if e.answer {
		s.out.last, s.answered = e.text, true
	}
	if e.usage != nil {
		s.msgs.set(e.id, *e.usage)
	}
	switch e.end {
	case ends:
		s.out.ended = true
	case goesOn:
		s.out.ended = false
	case endsAnswered:
		s.out.ended = s.answered
	case callsTool:
		s.out.ended, s.answered, s.out.last = false, false, ""
	}
}

// result is the turn read: its usage summed, or its total's difference.
func (s *turnScan) result() turnRecord {
	out := s.out
	if s.f.totals {
		if s.started && s.counted {
			t, b := s.total, s.before
			out.usage = profile.Usage{Input: t.Input - b.Input, Output: t.Output - b.Output, Cached: t.Cached - b.Cached}
			out.ok = true
		}
		return out
	}
	s.msgs.each(func(u profile.Usage) { out.usage = plus(out.usage, u) })
	out.ok = s.started && s.msgs.len() > 0
	return out
}

// place is a record line's place: its timestamp (zero for none, or a
// record not timed), then its line number.
type place struct {
	at time.Time
	n  int
}

func (k place) after(o place) bool {
	return k.at.After(o.at) || k.at.Equal(o.at) && k.n > o.n
}

// timestampKey starts a JSON line's "timestamp".
var timestampKey = []byte(`"timestamp":"`)

// lineTime reads a JSON line's "timestamp" (RFC 3339) without decoding
// the line; zero when it has none.
func lineTime(raw []byte) time.Time {
	i := bytes.Index(raw, timestampKey)
	if i < 0 {
		return time.Time{}
	}
	rest := raw[i+len(timestampKey):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return time.Time{}
	}
	t, _ := time.Parse(time.RFC3339Nano, string(rest[:j]))
	return clock.Outside(t)
}

// lastByID keeps the last value set for each id, in the order the ids
// first came (a session file rewrites a message as it streams: its last
// line counts, once); an empty id is a value of its own.
type lastByID[T any] struct {
	order []string
	m     map[string]T
}

func (l *lastByID[T]) set(id string, v T) {
	if l.m == nil {
		l.m = map[string]T{}
	}
	if id == "" {
		id = "\x00" + strconv.Itoa(len(l.order))
	}
	if _, seen := l.m[id]; !seen {
		l.order = append(l.order, id)
	}
	l.m[id] = v
}

func (l *lastByID[T]) len() int { return len(l.order) }

func (l *lastByID[T]) each(fn func(T)) {
	for _, id := range l.order {
		fn(l.m[id])
	}
}
