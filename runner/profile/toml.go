// Reading TOML with the place of every key: the values come from the
// TOML library's decoder, their lines from its parser's syntax tree, so an
// error (or a rule) can name the line it comes from.

package profile

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/runner-cli/runner/runner/fault"
)

// tomlDoc is a decoded TOML document and, worked out on first use (an
// error, an origin asked for), the line of each key path: "ready" (the
// key), "ready[2]" (an array's element), "hook.kind", "trust[0].pattern"
// (an array of tables' element's key). Safe for concurrent use.
type tomlDoc struct {
	values map[string]any
	data   []byte
	// embedded, when data is nil, is the built-in agent file (its path
	// in builtinFS) whose lines are read at their first use: a built-in
	// profile made by builtin_gen.go's code holds no decoded document.
	embedded string

	linesOnce sync.Once
	lines     map[string]int
}

// parseTOML decodes data. A syntax error (or a key defined twice) is a
// *FileError with the line and column, File left empty.
func parseTOML(data []byte) (*tomlDoc, error) {
	values := map[string]any{}
	if err := toml.Unmarshal(data, &values); err != nil {
		return nil, tomlError(err)
	}
	return &tomlDoc{values: values, data: data}, nil
}

// tomlError turns the TOML library's error into a *FileError with its
// place (File left empty for the caller).
func tomlError(err error) error {
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, col := de.Position()
		msg := strings.TrimPrefix(de.Error(), "toml: ")
		return &FileError{Line: line, Column: col, Key: strings.Join(de.Key(), "."), Err: errors.New(msg)}
	}
	var pe *unstable.ParserError
	if errors.As(err, &pe) {
		return &FileError{Err: errors.New(pe.Message)}
	}
	return &FileError{Err: err}
}

// tomlLines walks data's syntax tree and returns the line of every key
// path (see tomlDoc). The walk follows the document's order: a [table]
// header sets the prefix of the keys below it, and the n-th [[table]] of a
// name is "name[n]".
func tomlLines(data []byte) (map[string]int, error) {
	starts := []int{0} // byte offset of each line's start
	for i, b := range data {
		if b == '\n' {
			starts = append(starts, i+1)
		}
	}
	lineOf := func(n *unstable.Node) int {
		if n == nil || n.Raw.Length == 0 && n.Raw.Offset == 0 {
			return 0
		}
		return sort.Search(len(starts), func(i int) bool { return starts[i] > int(n.Raw.Offset) })
	}
	out := map[string]int{}
	arrays := map[string]int{}
	var p unstable.Parser
	p.Reset(data)
	prefix := ""
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			name, first := keyPath(e.Key())
			prefix = name
			if e.Kind == unstable.ArrayTable {
				prefix = name + "[" + strconv.Itoa(arrays[name]) + "]"
				arrays[name]++
			}
			if _, ok := out[prefix]; !ok {
				out[prefix] = lineOf(first)
			}
			if _, ok := out[name]; !ok {
				out[name] = lineOf(first)
			}
		case unstable.KeyValue:
			keyValueLines(out, prefix, e, lineOf)
		}
	}
	return out, p.Error()
}

// keyValueLines records the lines of a key = value (and of what the value
// holds) under prefix.
func keyValueLines(out map[string]int, prefix string, kv *unstable.Node, lineOf func(*unstable.Node) int) {
	name, first := keyPath(kv.Key())
	path := joinPath(prefix, name)
	out[path] = lineOf(first)
	valueLines(out, path, kv.Value(), lineOf)
}

func valueLines(out map[string]int, path string, v *unstable.Node, lineOf func(*unstable.Node) int) {
	switch v.Kind {
	case unstable.Array:
		i := 0
		for it := v.Children(); it.Next(); i++ {
			c := it.Node()
			el := path + "[" + strconv.Itoa(i) + "]"
			if l := lineOf(c); l > 0 {
				out[el] = l
			} else {
				out[el] = out[path] // an inline table or array has no range of its own
			}
			valueLines(out, el, c, lineOf)
		}
	case unstable.InlineTable:
		for it := v.Children(); it.Next(); {
			keyValueLines(out, path, it.Node(), lineOf)
		}
	}
}

// keyPath joins a (possibly dotted) key's parts with "." and returns the
// node of its first part.
func keyPath(it unstable.Iterator) (string, *unstable.Node) {
	var parts []string
	var first *unstable.Node
	for it.Next() {
		n := it.Node()
		if first == nil {
			first = n
		}
		parts = append(parts, string(n.Data))
	}
	return strings.Join(parts, "."), first
}

func joinPath(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// line returns the line of path or, failing that, of the nearest path
// above it ("trust[0].keys" → "trust[0]" → "trust"); 0 when none.
func (d *tomlDoc) line(path string) int {
	d.linesOnce.Do(func() {
		data := d.data
		if data == nil && d.embedded != "" {
			data, _ = builtinFS.ReadFile(d.embedded)
		}
		d.lines, _ = tomlLines(data) // the data decoded: its syntax is sound
	})
	for path != "" {
		if l, ok := d.lines[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return 0
}

// tomlTypeName names a decoded TOML value's type for an error.
func tomlTypeName(v any) string {
	switch v := v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, int:
		return "an integer"
	case float64: // a TOML float, or any JSON number
		return fmt.Sprintf("the number %v", v)
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	case time.Time, toml.LocalDate, toml.LocalDateTime, toml.LocalTime:
		return "a date or time"
	default:
		return fmt.Sprintf("a %T", v)
	}
}

// FileError is an error at a place in a profile file (or another TOML
// file runner reads): a syntax error, an unknown key, a value of the wrong
// type, a bad regular expression.
type FileError struct {
	// File is the file's path ("" when the caller has not set it yet).
	File string `json:"file"`
	// Line and Column are 1-based; 0 when unknown.
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
	// Key is the key path that is wrong ("ready[2]", "hook.kind"); "" for
	// a syntax error.
	Key string `json:"key,omitempty"`
	// Err says what is wrong.
	Err error `json:"-"`
}

// Error reads "FILE:LINE:COL: key "K": what is wrong".
func (e *FileError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if e.Key != "" {
		fmt.Fprintf(&b, "key %q: ", e.Key)
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns what is wrong.
func (e *FileError) Unwrap() error { return e.Err }

// MarshalJSON writes {"file", "line", "column", "key", "message"}.
func (e *FileError) MarshalJSON() ([]byte, error) {
	msg := ""
	if e.Err != nil {
		msg = e.Err.Error()
	}
	return json.Marshal(struct {
		File    string `json:"file"`
		Line    int    `json:"line,omitempty"`
		Column  int    `json:"column,omitempty"`
		Key     string `json:"key,omitempty"`
		Message string `json:"message"`
	}{e.File, e.Line, e.Column, e.Key, msg})
}

// Is makes a FileError bad input from the user (fault.ErrUsage): the file
// needs fixing.
func (e *FileError) Is(target error) bool { return target == fault.ErrUsage }
