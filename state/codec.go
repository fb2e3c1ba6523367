package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// The state file's own codec. encoding/json decodes about 80 MB/s here, so
// a state of 10 000 task records (15 MB) took 170 ms to read; this codec
// knows the shape of the file and reads it several times faster. It produces
// exactly what encoding/json produces (the file stays byte for byte the
// same, so older runners read it), and:
//
//   - the decoder accepts only what it fully understands: an unknown or
//     repeated key, a value of an unexpected kind, a malformed token or
//     anything else unusual makes it give up, and parse decodes the file
//     with encoding/json instead. Correctness never depends on the fast
//     path; codec_test.go checks that, where it answers, it answers exactly
//     what encoding/json does.
//   - the encoder fails on what json.Marshal fails on (a time outside
//     RFC 3339, an invalid settings blob), and encode then lets json.Marshal
//     produce the error.
//
// Each struct has a table of its json fields, in declaration order, built
// from small typed constructors (strField, timeField, …). A field added to
// a struct must be added to its table: TestCodecCoversEveryField fails and
// names it until it is.

// fieldOpt are a field's json tag options.
type fieldOpt uint8

const (
	omitEmpty fieldOpt = 1 << iota // ",omitempty"
	omitZero                       // ",omitzero"
	inHeader                       // a State field the header writes (see encode), not the body
)

// field is one json field of a struct T.
type field[T any] struct {
	key  string
	opt  fieldOpt
	dec  func(d *decoder, v *T)
	enc  func(b []byte, v *T) []byte
	omit func(v *T) bool // nil: never omitted
}

// omitter builds a field's omit function from its options: omitempty uses
// empty, omitzero uses zero (either may be nil: never).
func omitter[T any](opt fieldOpt, empty, zero func(*T) bool) func(*T) bool {
	if opt&omitEmpty == 0 || empty == nil {
		empty = nil
	}
	if opt&omitZero == 0 || zero == nil {
		zero = nil
	}
	switch {
	case empty != nil && zero != nil:
		return func(v *T) bool { return empty(v) || zero(v) }
	case empty != nil:
		return empty
	}
	return zero
}

// scalarField is a field whose value is one JSON scalar: empty (for both
// omitempty and omitzero) is V's zero value.
func scalarField[T any, V comparable](key string, opt fieldOpt, get func(*T) *V, dec func(*decoder) V, enc func([]byte, V) []byte) field[T] {
	var zero V
	isEmpty := func(v *T) bool { return *get(v) == zero }
	return field[T]{
		key: key, opt: opt,
		dec:  func(d *decoder, v *T) { *get(v) = dec(d) },
		enc:  func(b []byte, v *T) []byte { return enc(b, *get(v)) },
		omit: omitter(opt, isEmpty, isEmpty),
	}
}

func strField[T any, S ~string](key string, opt fieldOpt, get func(*T) *S) field[T] {
	return scalarField(key, opt, get, func(d *decoder) S { return S(d.str()) },
		func(b []byte, v S) []byte { return appendString(b, string(v)) })
}

func intField[T any](key string, opt fieldOpt, get func(*T) *int) field[T] {
	return scalarField(key, opt, get, (*decoder).int, appendInt)
}

func uintField[T any](key string, opt fieldOpt, get func(*T) *uint64) field[T] {
	return scalarField(key, opt, get, (*decoder).uint, appendUint)
}

func boolField[T any](key string, opt fieldOpt, get func(*T) *bool) field[T] {
	return scalarField(key, opt, get, (*decoder).bool, strconv.AppendBool)
}

// intPtrField is a *int: null or absent is nil.
func intPtrField[T any](key string, opt fieldOpt, get func(*T) **int) field[T] {
	isNil := func(v *T) bool { return *get(v) == nil }
	return field[T]{
		key: key, opt: opt,
		dec: func(d *decoder, v *T) {
			if d.null() {
				*get(v) = nil
				return
			}
			n := d.int()
			*get(v) = &n
		},
		enc: func(b []byte, v *T) []byte {
			if p := *get(v); p != nil {
				return appendInt(b, *p)
			}
			return append(b, "null"...)
		},
		omit: omitter(opt, isNil, isNil),
	}
}

// timeField is a time.Time (its MarshalJSON/UnmarshalJSON format);
// omitempty never omits a struct, omitzero uses IsZero.
func timeField[T any](key string, opt fieldOpt, get func(*T) *time.Time) field[T] {
	return field[T]{
		key: key, opt: opt,
		dec:  func(d *decoder, v *T) { *get(v) = d.time() },
		enc:  func(b []byte, v *T) []byte { return appendTime(b, *get(v)) },
		omit: omitter(opt, nil, func(v *T) bool { return get(v).IsZero() }),
	}
}

// rawField is a json.RawMessage, kept as the bytes of the value.
func rawField[T any](key string, opt fieldOpt, get func(*T) *json.RawMessage) field[T] {
	return field[T]{
		key: key, opt: opt,
		dec:  func(d *decoder, v *T) { *get(v) = d.raw() },
		enc:  func(b []byte, v *T) []byte { return appendRaw(b, *get(v)) },
		omit: omitter(opt, func(v *T) bool { return len(*get(v)) == 0 }, func(v *T) bool { return *get(v) == nil }),
	}
}

// structField is a struct held by value, with its own table.
func structField[T any, E comparable](key string, opt fieldOpt, get func(*T) *E, fields []field[E]) field[T] {
	var zero E
	return field[T]{
		key: key, opt: opt,
		dec:  func(d *decoder, v *T) { decodeObject(d, get(v), fields) },
		enc:  func(b []byte, v *T) []byte { return encodeObject(b, get(v), fields, 0) },
		omit: omitter(opt, nil, func(v *T) bool { return *get(v) == zero }),
	}
}

// sliceField is a []E of structs: null is nil, [] an empty non-nil slice.
func sliceField[T, E any](key string, opt fieldOpt, get func(*T) *[]E, fields []field[E]) field[T] {
	return field[T]{
		key: key, opt: opt,
		dec: func(d *decoder, v *T) {
			if d.null() {
				*get(v) = nil
				return
			}
			d.want('[')
			// Decode into a buffer on the stack, so the slice is
			// allocated once at its size (encoding/json's is non-nil
			// even when empty).
			var buf [8]E
			s := buf[:0]
			if !d.end(']') {
				for {
					s = append(s, *new(E))
					decodeObject(d, &s[len(s)-1], fields)
					if !d.more(']') {
						break
					}
				}
			}
			if len(s) <= len(buf) {
				s = append(make([]E, 0, len(s)), s...)
			}
			*get(v) = s
		},
		enc: func(b []byte, v *T) []byte {
			s := *get(v)
			if s == nil {
				return append(b, "null"...)
			}
			b = append(b, '[')
			for i := range s {
				if i > 0 {
					b = append(b, ',')
				}
				b = encodeObject(b, &s[i], fields, 0)
			}
			return append(b, ']')
		},
		omit: omitter(opt, func(v *T) bool { return len(*get(v)) == 0 }, func(v *T) bool { return *get(v) == nil }),
	}
}

// strSliceField is a []string: null is nil, [] an empty non-nil slice.
func strSliceField[T any](key string, opt fieldOpt, get func(*T) *[]string) field[T] {
	return field[T]{
		key: key, opt: opt,
		dec: func(d *decoder, v *T) {
			if d.null() {
				*get(v) = nil
				return
			}
			d.want('[')
			s := []string{}
			if !d.end(']') {
				for {
					s = append(s, d.str())
					if !d.more(']') {
						break
					}
				}
			}
			*get(v) = s
		},
		enc: func(b []byte, v *T) []byte {
			s := *get(v)
			if s == nil {
				return append(b, "null"...)
			}
			b = append(b, '[')
			for i, e := range s {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendString(b, e)
			}
			return append(b, ']')
		},
		omit: omitter(opt, func(v *T) bool { return len(*get(v)) == 0 }, func(v *T) bool { return *get(v) == nil }),
	}
}

// mapField is a map[string]*E: null is a nil map, a null value a nil
// pointer; keys are written sorted, as encoding/json does.
func mapField[T, E any](key string, opt fieldOpt, get func(*T) *map[string]*E, fields []field[E]) field[T] {
	return field[T]{
		key: key, opt: opt,
		dec: func(d *decoder, v *T) {
			if d.null() {
				*get(v) = nil
				return
			}
			d.want('{')
			m := map[string]*E{}
			if !d.end('}') {
				for {
					k := d.str()
					d.want(':')
					var e *E
					if !d.null() {
						e = new(E)
						decodeObject(d, e, fields)
					}
					m[k] = e
					if !d.more('}') {
						break
					}
				}
			}
			*get(v) = m
		},
		enc: func(b []byte, v *T) []byte {
			m := *get(v)
			if m == nil {
				return append(b, "null"...)
			}
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			b = append(b, '{')
			for i, k := range keys {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendString(b, k)
				b = append(b, ':')
				if e := m[k]; e != nil {
					b = encodeObject(b, e, fields, 0)
				} else {
					b = append(b, "null"...)
				}
			}
			return append(b, '}')
		},
		omit: omitter(opt, func(v *T) bool { return len(*get(v)) == 0 }, func(v *T) bool { return *get(v) == nil }),
	}
}

// The tables, one per struct, in the structs' field order.
var (
	stateFields = []field[State]{
		intField("version", inHeader, func(s *State) *int { return &s.Version }),
		uintField("generation", inHeader, func(s *State) *uint64 { return &s.Generation }),
		timeField("updated", inHeader|omitZero, func(s *State) *time.Time { return &s.Updated }),
		mapField("projects", 0, func(s *State) *map[string]*Project { return &s.Projects }, projectFields),
		mapField("tasks", 0, func(s *State) *map[string]*Task { return &s.Tasks }, taskFields),
		mapField("messages", omitEmpty, func(s *State) *map[string]*Message { return &s.Messages }, messageFields),
	}
	messageFields = []field[Message]{
		strField("id", 0, func(m *Message) *string { return &m.ID }),
		strField("from", 0, func(m *Message) *string { return &m.From }),
		strField("to", 0, func(m *Message) *string { return &m.To }),
		strField("type", 0, func(m *Message) *MessageType { return &m.Type }),
		strField("text", 0, func(m *Message) *string { return &m.Text }),
		intField("hops", 0, func(m *Message) *int { return &m.Hops }),
		strField("root", omitEmpty, func(m *Message) *string { return &m.Root }),
		intField("merged", omitEmpty, func(m *Message) *int { return &m.Merged }),
		strField("status", 0, func(m *Message) *MessageStatus { return &m.Status }),
		strField("reason", omitEmpty, func(m *Message) *string { return &m.Reason }),
		timeField("created", 0, func(m *Message) *time.Time { return &m.Created }),
		timeField("delivered", omitZero, func(m *Message) *time.Time { return &m.Delivered }),
		intField("claimed_by", omitEmpty, func(m *Message) *int { return &m.ClaimedBy }),
	}
	projectFields = []field[Project]{
		strField("name", 0, func(p *Project) *string { return &p.Name }),
		strField("dir", 0, func(p *Project) *string { return &p.Dir }),
		timeField("added", 0, func(p *Project) *time.Time { return &p.Added }),
	}
	statusChangeFields = []field[StatusChange]{
		strField("status", 0, func(c *StatusChange) *Status { return &c.Status }),
		timeField("time", 0, func(c *StatusChange) *time.Time { return &c.Time }),
		strField("reason", omitEmpty, func(c *StatusChange) *string { return &c.Reason }),
	}
	turnFields = []field[Turn]{
		timeField("time", 0, func(t *Turn) *time.Time { return &t.Time }),
		strField("summary", 0, func(t *Turn) *string { return &t.Summary }),
		strField("answer", omitEmpty, func(t *Turn) *string { return &t.Answer }),
	}
	tmuxFields = []field[TmuxTarget]{
		strField("socket", omitEmpty, func(t *TmuxTarget) *string { return &t.Socket }),
		strField("session", omitEmpty, func(t *TmuxTarget) *string { return &t.Session }),
		strField("window", omitEmpty, func(t *TmuxTarget) *string { return &t.Window }),
		strField("pane", omitEmpty, func(t *TmuxTarget) *string { return &t.Pane }),
	}
	taskFields = []field[Task]{
		strField("id", 0, func(t *Task) *string { return &t.ID }),
		strField("project", omitEmpty, func(t *Task) *string { return &t.Project }),
		strField("dir", 0, func(t *Task) *string { return &t.Dir }),
		strField("agent", 0, func(t *Task) *string { return &t.Agent }),
		strField("text", 0, func(t *Task) *string { return &t.Text }),
		strField("text_file", omitEmpty, func(t *Task) *string { return &t.TextFile }),
		strField("status", 0, func(t *Task) *Status { return &t.Status }),
		sliceField("history", 0, func(t *Task) *[]StatusChange { return &t.History }, statusChangeFields),
		structField("tmux", omitZero, func(t *Task) *TmuxTarget { return &t.Tmux }, tmuxFields),
		intField("supervisor_pid", omitEmpty, func(t *Task) *int { return &t.SupervisorPID }),
		strField("parent", omitEmpty, func(t *Task) *string { return &t.Parent }),
		intField("level", 0, func(t *Task) *int { return &t.Level }),
		strField("source", omitEmpty, func(t *Task) *string { return &t.Source }),
		strSliceField("after", omitEmpty, func(t *Task) *[]string { return &t.After }),
		timeField("created", 0, func(t *Task) *time.Time { return &t.Created }),
		timeField("started", omitZero, func(t *Task) *time.Time { return &t.Started }),
		timeField("ended", omitZero, func(t *Task) *time.Time { return &t.Ended }),
		intPtrField("exit_code", omitEmpty, func(t *Task) **int { return &t.ExitCode }),
		strField("result_tail", omitEmpty, func(t *Task) *string { return &t.ResultTail }),
		strField("snapshot_ref", omitEmpty, func(t *Task) *string { return &t.SnapshotRef }),
		strField("commit", omitEmpty, func(t *Task) *string { return &t.Commit }),
		strField("delivery", omitEmpty, func(t *Task) *string { return &t.Delivery }),
		strField("answer", omitEmpty, func(t *Task) *string { return &t.Answer }),
		strField("agent_session", omitEmpty, func(t *Task) *string { return &t.AgentSession }),
		sliceField("turns", omitEmpty, func(t *Task) *[]Turn { return &t.Turns }, turnFields),
		strField("transcript", omitEmpty, func(t *Task) *string { return &t.Transcript }),
		strField("question", omitEmpty, func(t *Task) *string { return &t.Question }),
		strSliceField("handling", omitEmpty, func(t *Task) *[]string { return &t.Handling }),
		intField("handling_hops", omitEmpty, func(t *Task) *int { return &t.HandlingHops }),
		timeField("reclaimed", omitZero, func(t *Task) *time.Time { return &t.Reclaimed }),
		rawField("settings", omitEmpty, func(t *Task) *json.RawMessage { return &t.Settings }),
	}
)

// ---- decoding ----

// decoder reads one state file, held in a string: strings without escapes
// are substrings of it instead of an allocation each (so the records of a
// state keep the file's text alive, which they mostly are anyway).
type decoder struct {
	s string
	i int
}

// fallback is the panic value with which the decoder gives up.
type fallback struct{}

// errFallback says the fast decoder did not understand the file.
var errFallback = errors.New("the fast decoder does not understand this file")

// decodeFast decodes a state file. It returns errFallback if anything in
// the file is outside what it handles, and the caller must then use
// encoding/json; it never returns a partly decoded state.
func decodeFast(raw string) (st *State, err error) {
	defer func() {
		if r := recover(); r != nil {
			st = nil
			if _, ok := r.(fallback); ok {
				err = errFallback
			} else {
				// A bug in this decoder: encoding/json will still read the
				// file, and the tests fail on it.
				err = fmt.Errorf("%w: %v", errFallback, r)
			}
		}
	}()
	d := &decoder{s: raw}
	st = new(State)
	decodeObject(d, st, stateFields)
	d.ws()
	if d.i != len(d.s) {
		panic(fallback{})
	}
	return st, nil
}

// decodeObject decodes a JSON object into v through its field table. Keys
// usually come in table order, so the search starts after the last match.
func decodeObject[T any](d *decoder, v *T, fields []field[T]) {
	d.want('{')
	if d.end('}') {
		return
	}
	next, seen := 0, uint64(0)
	for {
		key := d.key()
		d.want(':')
		k := -1
		for j := range fields {
			x := next + j
			if x >= len(fields) {
				x -= len(fields)
			}
			if fields[x].key == key {
				k = x
				break
			}
		}
		// An unknown or repeated key (or a field past the 64th) is for
		// encoding/json to decide.
		if k < 0 || k >= 64 || seen&(1<<k) != 0 {
			panic(fallback{})
		}
		seen |= 1 << k
		fields[k].dec(d, v)
		next = k + 1
		if !d.more('}') {
			return
		}
	}
}

// ws skips white space.
func (d *decoder) ws() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// want consumes c after optional white space.
func (d *decoder) want(c byte) {
	d.ws()
	if d.i >= len(d.s) || d.s[d.i] != c {
		panic(fallback{})
	}
	d.i++
}

// end consumes c (closing an empty object or array) if it comes next.
func (d *decoder) end(c byte) bool {
	d.ws()
	if d.i < len(d.s) && d.s[d.i] == c {
		d.i++
		return true
	}
	return false
}

// more consumes the ',' before another element and reports true, or the
// closing c and reports false.
func (d *decoder) more(c byte) bool {
	d.ws()
	if d.i < len(d.s) {
		switch d.s[d.i] {
		case ',':
			d.i++
			return true
		case c:
			d.i++
			return false
		}
	}
	panic(fallback{})
}

// null consumes a null literal if one comes next.
func (d *decoder) null() bool {
	d.ws()
	if d.i+4 <= len(d.s) && d.s[d.i:d.i+4] == "null" {
		d.i += 4
		return true
	}
	return false
}

// plain marks the bytes a string can hold with no further thought.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plainRun returns the index of the first byte from i on that is not
// plain (or len(s)), looking at eight bytes at a time while it can.
func plainRun(s string, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		quote, backslash := w^(ones*'"'), w^(ones*'\\')
		// A byte of 0x80 or more, or below 0x20, or a zero byte in quote
		// or backslash (the classic exact "has a zero byte" test).
		if (w|(w-ones*0x20)&^w|(quote-ones)&^quote|(backslash-ones)&^backslash)&highs != 0 {
			break
		}
	}
	for i < len(s) && plain[s[i]] {
		i++
	}
	return i
}

// key reads an object key. Keys of struct fields are plain ASCII; anything
// else is for encoding/json to match (it matches case-insensitively too).
func (d *decoder) key() string {
	d.want('"')
	start := d.i
	for d.i < len(d.s) && plain[d.s[d.i]] {
		d.i++
	}
	if d.i >= len(d.s) || d.s[d.i] != '"' {
		panic(fallback{})
	}
	d.i++
	return d.s[start : d.i-1]
}

// str reads a string value, with the rules of encoding/json: escapes
// decoded, invalid UTF-8 and lone surrogates turned into U+FFFD.
func (d *decoder) str() string {
	d.want('"')
	s, start := d.s, d.i
	i := plainRun(s, start)
	if i < len(s) && s[i] == '"' {
		d.i = i + 1
		return s[start:i]
	}
	return d.strSlow(start, i)
}

// strSlow reads on from i, the first byte of the string starting at start
// that is not plain. Unless something must be rewritten, the result is
// still a substring of the file.
func (d *decoder) strSlow(start, i int) string {
	s := d.s
	var b strings.Builder // used from the first rewrite on
	rewrite := func(with string, next int) {
		if b.Cap() == 0 {
			b.Grow(2 * (i - start + 16))
		}
		b.WriteString(s[start:i])
		b.WriteString(with)
		i, start = next, next
	}
	for {
		i = plainRun(s, i)
		if i >= len(s) {
			panic(fallback{})
		}
		switch c := s[i]; {
		case c == '"':
			d.i = i + 1
			if b.Cap() == 0 {
				return s[start:i]
			}
			b.WriteString(s[start:i])
			return b.String()
		case c == '\\':
			if i+1 >= len(s) {
				panic(fallback{})
			}
			switch s[i+1] {
			case '"', '\\', '/':
				rewrite(s[i+1:i+2], i+2)
			case 'b':
				rewrite("\b", i+2)
			case 'f':
				rewrite("\f", i+2)
			case 'n':
				rewrite("\n", i+2)
			case 'r':
				rewrite("\r", i+2)
			case 't':
				rewrite("\t", i+2)
			case 'u':
				r := getu4(s[i:])
				if r < 0 {
					panic(fallback{})
				}
				n := i + 6
				if utf16.IsSurrogate(r) {
					if dec := utf16.DecodeRune(r, getu4(s[n:])); dec != unicode.ReplacementChar {
						r, n = dec, n+6
					} else {
						r = unicode.ReplacementChar
					}
				}
				rewrite(string(r), n)
			default:
				panic(fallback{}) // encoding/json refuses other escapes
			}
		case c < 0x20:
			panic(fallback{}) // control characters must be escaped
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				rewrite("\ufffd", i+1)
			} else {
				i += size
			}
		}
	}
}

// skipString finds the closing quote of the string whose content starts at
// start, checking it as the JSON grammar does.
func (d *decoder) skipString(start int) int {
	b := d.s
	for i := start; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			return i
		case c < 0x20:
			panic(fallback{})
		case c == '\\':
			if i+1 >= len(b) {
				panic(fallback{})
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if getu4(b[i:]) < 0 {
					panic(fallback{})
				}
				i += 6
			default:
				panic(fallback{})
			}
		default:
			i++
		}
	}
	panic(fallback{})
}

// getu4 decodes \uXXXX at the start of s, or returns -1.
func getu4(s string) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for i := 2; i < 6; i++ {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			c = c - '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// digits reads an integer literal: an optional minus, then 0 or a digit
// run not starting with 0. A fraction or an exponent is for encoding/json
// (it refuses them for integer fields).
func (d *decoder) digits() (neg bool, mag uint64) {
	d.ws()
	b := d.s
	i := d.i
	if i < len(b) && b[i] == '-' {
		neg = true
		i++
	}
	start := i
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		c := uint64(b[i] - '0')
		if mag > (1<<64-1-c)/10 {
			panic(fallback{}) // overflow
		}
		mag = mag*10 + c
		i++
	}
	switch {
	case i == start, b[start] == '0' && i-start > 1:
		panic(fallback{})
	case i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E'):
		panic(fallback{})
	}
	d.i = i
	return neg, mag
}

func (d *decoder) int() int {
	neg, mag := d.digits()
	const maxInt = 1<<63 - 1
	switch {
	case !neg && mag <= maxInt:
		return int(mag)
	case neg && mag <= maxInt+1:
		return int(-mag)
	}
	panic(fallback{})
}

func (d *decoder) bool() bool {
	d.ws()
	switch {
	case strings.HasPrefix(d.s[d.i:], "true"):
		d.i += 4
		return true
	case strings.HasPrefix(d.s[d.i:], "false"):
		d.i += 5
		return false
	}
	panic(fallback{})
}

func (d *decoder) uint() uint64 {
	neg, mag := d.digits()
	if neg {
		panic(fallback{})
	}
	return mag
}

// time reads a time as time.Time.UnmarshalJSON does: the common UTC form
// "2006-01-02T15:04:05.999999999Z" directly, anything else through
// UnmarshalJSON itself.
func (d *decoder) time() time.Time {
	d.want('"')
	start := d.i
	if t, n, ok := parseUTC(d.s[start:]); ok {
		d.i = start + n + 1
		return t
	}
	end := d.skipString(start)
	d.i = end + 1
	var t time.Time
	if err := t.UnmarshalJSON([]byte(d.s[start-1 : d.i])); err != nil {
		panic(fallback{})
	}
	return t
}

// parseUTC parses "2006-01-02T15:04:05Z" with an optional fraction of 1 to
// 9 digits, followed by the closing quote, at the start of s, and returns
// the time and the length of its text (the index of the quote). It applies the checks of
// time's RFC 3339 parser and returns the same value (time.Date in UTC).
func parseUTC(s string) (t time.Time, n int, ok bool) {
	if len(s) < 21 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return time.Time{}, 0, false
	}
	ok = true
	num := func(p string) int {
		v := 0
		for i := 0; i < len(p); i++ {
			c := p[i]
			if c < '0' || c > '9' {
				ok = false
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	year, month, day := num(s[0:4]), num(s[5:7]), num(s[8:10])
	hour, minute, sec := num(s[11:13]), num(s[14:16]), num(s[17:19])
	nsec, n := 0, 19
	if s[n] == '.' {
		n++
		for n < len(s) && n < 29 && '0' <= s[n] && s[n] <= '9' {
			nsec = nsec*10 + int(s[n]-'0')
			n++
		}
		if n == 20 {
			return time.Time{}, 0, false
		}
		for range 29 - n {
			nsec *= 10
		}
	}
	if n+1 >= len(s) || s[n] != 'Z' || s[n+1] != '"' {
		return time.Time{}, 0, false
	}
	if !ok || month < 1 || month > 12 || day < 1 || day > daysIn(month, year) || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, 0, false
	}
	// Days since 1970-01-01 of the proleptic Gregorian date (Howard
	// Hinnant's days_from_civil), then time.Unix: the same value as
	// time.Date(…, time.UTC), without its normalisation work.
	y := year
	if month <= 2 {
		y--
	}
	era := y / 400
	if y < 0 {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	mp := (month + 9) % 12
	doy := (153*mp+2)/5 + day - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	days := era*146097 + doe - 719468
	unix := int64(days)*86400 + int64(hour*3600+minute*60+sec)
	return time.Unix(unix, int64(nsec)).UTC(), n + 1, true
}

// raw reads any JSON value and returns a copy of its bytes, as
// json.RawMessage's UnmarshalJSON keeps them.
func (d *decoder) raw() json.RawMessage {
	d.ws()
	start := d.i
	d.skip(0)
	return json.RawMessage(d.s[start:d.i])
}

// skip consumes one JSON value of any kind, checking its grammar.
func (d *decoder) skip(depth int) {
	if depth > 1000 {
		panic(fallback{})
	}
	d.ws()
	if d.i >= len(d.s) {
		panic(fallback{})
	}
	switch c := d.s[d.i]; c {
	case '{':
		d.i++
		if d.end('}') {
			return
		}
		for {
			d.want('"')
			end := d.skipString(d.i)
			d.i = end + 1
			d.want(':')
			d.skip(depth + 1)
			if !d.more('}') {
				return
			}
		}
	case '[':
		d.i++
		if d.end(']') {
			return
		}
		for {
			d.skip(depth + 1)
			if !d.more(']') {
				return
			}
		}
	case '"':
		end := d.skipString(d.i + 1)
		d.i = end + 1
	case 't', 'f', 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if d.i+len(lit) <= len(d.s) && d.s[d.i:d.i+len(lit)] == lit {
				d.i += len(lit)
				return
			}
		}
		panic(fallback{})
	default:
		d.number()
	}
}

// number consumes a number literal: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (d *decoder) number() {
	b, i := d.s, d.i
	digits := func() {
		s := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == s {
			panic(fallback{})
		}
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else {
		digits()
	}
	if i < len(b) && b[i] == '.' {
		i++
		digits()
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		digits()
	}
	d.i = i
}

// ---- encoding ----

// encodeError is the panic value with which the encoder gives up.
type encodeError struct{ err error }

// encodeFast renders st's fields that are not in the header (see encode)
// as a JSON object, exactly as json.Marshal would, appending to b.
func encodeFast(b []byte, st *State) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(encodeError)
			if !ok {
				panic(r)
			}
			out, err = nil, e.err
		}
	}()
	return encodeObject(b, st, stateFields, inHeader), nil
}

// encodeObject appends v as a JSON object, leaving out the fields with an
// option in skip.
func encodeObject[T any](b []byte, v *T, fields []field[T], skip fieldOpt) []byte {
	b = append(b, '{')
	first := true
	for i := range fields {
		f := &fields[i]
		if f.opt&skip != 0 || f.omit != nil && f.omit(v) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, f.key...)
		b = append(b, '"', ':')
		b = f.enc(b, v)
	}
	return append(b, '}')
}

func appendInt(b []byte, v int) []byte { return strconv.AppendInt(b, int64(v), 10) }

func appendUint(b []byte, v uint64) []byte { return strconv.AppendUint(b, v, 10) }

// appendTime appends t as time.Time.MarshalJSON does.
func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b, err := t.AppendText(b)
	if err != nil {
		panic(encodeError{fmt.Errorf("json: error calling MarshalJSON for type time.Time: %w", err)})
	}
	return append(b, '"')
}

// appendRaw appends a json.RawMessage as json.Marshal does: compacted, with
// <, >, &, U+2028 and U+2029 escaped. The usual blob (marshalled by
// encoding/json already) is appended as it is.
func appendRaw(b []byte, m json.RawMessage) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	if compactAndSafe(m) && json.Valid(m) {
		return append(b, m...)
	}
	var c, e bytes.Buffer
	if err := json.Compact(&c, m); err != nil {
		panic(encodeError{fmt.Errorf("json: error calling MarshalJSON for type json.RawMessage: %w", err)})
	}
	json.HTMLEscape(&e, c.Bytes())
	return append(b, e.Bytes()...)
}

// compactAndSafe reports whether m has no white space outside strings and
// nothing json.Marshal would escape.
func compactAndSafe(m []byte) bool {
	in := false
	for i := 0; i < len(m); i++ {
		switch c := m[i]; c {
		case '"':
			in = !in
		case '\\':
			i++
		case ' ', '\t', '\n', '\r':
			if !in {
				return false
			}
		case '<', '>', '&', 0xE2:
			return false
		}
	}
	return true
}

// htmlSafe marks the ASCII bytes json.Marshal writes as they are.
var htmlSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string the way json.Marshal does
// (encoding/json's appendString with HTML escaping).
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if htmlSafe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
