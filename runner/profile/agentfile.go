// Agent files: a profile, whole or in part, written as TOML with the keys
// of `runner agents show`. The built-in profiles are such files, embedded
// (agents/*.toml); a user's files in the config directory add agents or
// override keys of built-in ones. Every key set keeps its origin, file and
// line, for errors and for Explain.

package profile

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/runner-cli/runner/internal/textutil"
)

// Origin is where a key of a profile was set: an agent file (built in or
// the user's) and its line, or the config file.
type Origin struct {
	// File is the file's path; for a built-in profile, its path in the
	// binary ("agents/claude.toml", runner/profile/agents in the sources).
	File string `json:"file,omitempty"`
	// Line is the key's 1-based line; 0 when unknown (the JSON config).
	Line int `json:"line,omitempty"`
	// Builtin says File is embedded in the binary.
	Builtin bool `json:"builtin,omitempty"`
}

// String reads "agents/claude.toml:12 (built in)" or "FILE:LINE"; "" when
// the origin is unknown (a profile built in Go).
func (o Origin) String() string {
	s := o.File
	if s != "" && o.Line > 0 {
		s = fmt.Sprintf("%s:%d", s, o.Line)
	}
	if s != "" && o.Builtin {
		s += " (built in)"
	}
	return s
}

// Origin returns where key ("busy[1]", "hook.kind", "enter_delay") was
// set: the file, and the key's line in it (or, for a key whose line is not
// known, the line of the nearest key above it, "busy"). The zero Origin
// when p was not read from a file.
func (p *Profile) Origin(key string) Origin {
	for k := key; k != ""; {
		if r, ok := p.origins[k]; ok {
			o := Origin{File: r.file, Builtin: r.builtin}
			if r.doc != nil {
				o.Line = r.doc.line(key)
			}
			return o
		}
		i := strings.LastIndexAny(k, ".[")
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return Origin{}
}

// Sources are the files that made p, in the order they were applied: the
// built-in file, then the user's agent file, then the config file.
func (p *Profile) Sources() []Origin { return append([]Origin(nil), p.sources...) }

// originRef is where a key path was set: the file, and the document that
// knows the line of the path and of every path inside it (nil for the
// JSON config's).
type originRef struct {
	file    string
	builtin bool
	doc     *tomlDoc
}

// origins records the origin of each key a decoder sets on p. p's map is
// copied before the first change: it may be shared with the profile p was
// cloned from.
type origins struct {
	p   *Profile
	ref originRef
	// base is the map p had before: its keys under a path set go.
	base   map[string]originRef
	copied bool
}

func (p *Profile) newOrigins(o Origin, doc *tomlDoc) *origins {
	return &origins{p: p, ref: originRef{file: o.File, builtin: o.Builtin, doc: doc}, base: p.origins}
}

// set records that path was set (replaced whole): the origins of what
// path held go, and path's own comes.
func (s *origins) set(path string) {
	if !s.copied {
		s.p.origins = maps.Clone(s.p.origins)
		if s.p.origins == nil {
			s.p.origins = map[string]originRef{}
		}
		s.copied = true
	}
	for k := range s.base { // a path is set once per decode: only what came before can be under it
		if under(k, path) {
			delete(s.p.origins, k)
		}
	}
	s.p.origins[path] = s.ref
}

// under reports whether key k is path or inside it ("ready[1]" and
// "ready" are under "ready"; "ready_hold" is not).
func under(k, path string) bool {
	if !strings.HasPrefix(k, path) {
		return false
	}
	rest := k[len(path):]
	return rest == "" || rest[0] == '.' || rest[0] == '['
}

// File is an agent file read by ParseFile: TOML whose top-level keys are a
// profile's (the keys `runner agents show NAME` prints, hook and trust as
// tables), for the agent its file name names.
type File struct {
	// Path is where the file was read, as errors and origins name it.
	Path string
	// Name is the agent's name: the file's name without ".toml".
	Name string
	// Builtin says the file is embedded in the binary.
	Builtin bool

	doc *tomlDoc
}

// nameRE is what an agent's name may be (as --agent, and the file's
// name): it is also a config key and part of file names.
var nameRE = textutil.LazyRegexp(`^[a-z0-9][a-z0-9_-]*$`)

// ParseFile reads the agent file at path (its content data). The agent's
// name is the file's name without ".toml"; a "name" key, if any, must say
// the same. Errors are *FileError: a TOML syntax error with its line and
// column, a bad name. Keys and values are checked by Apply.
func ParseFile(path string, data []byte) (*File, error) {
	base := filepath.Base(path)
	name, ok := strings.CutSuffix(base, ".toml")
	if !ok || !nameRE.Re().MatchString(name) {
		return nil, &FileError{File: path, Err: fmt.Errorf("bad agent file name %q: want NAME.toml, NAME of lowercase letters, digits, '-' and '_' (the agent's name, as --agent takes it)", base)}
	}
	doc, err := parseTOML(data)
	if err != nil {
		var fe *FileError
		if errors.As(err, &fe) {
			fe.File = path
		}
		return nil, err
	}
	if n, ok := doc.values["name"]; ok && n != name {
		return nil, &FileError{File: path, Line: doc.line("name"), Key: "name",
			Err: fmt.Errorf("%q differs from the file's name %q (leave \"name\" out: the file names the agent)", n, name)}
	}
	return &File{Path: path, Name: name, doc: doc}, nil
}

// Keys returns the top-level keys the file sets, sorted.
func (f *File) Keys() []string { return slices.Sorted(maps.Keys(f.doc.values)) }

// Sets reports whether the file sets key (a top-level key, "enter_delay").
func (f *File) Sets(key string) bool {
	_, ok := f.doc.values[key]
	return ok
}

// Apply returns base overlaid with the file's keys, compiled: a key the
// file sets replaces base's value (a list is replaced whole; a table, hook
// or env, is merged key by key), the others keep base's. A nil base: the
// file defines a new agent (it needs "command"). base is not modified.
// Errors are *FileError naming the file, the line and the key: an unknown
// key, a value of the wrong type, a bad regular expression.
func (f *File) Apply(base *Profile) (*Profile, error) { return f.apply(base, false) }

// apply is Apply; lazy leaves the patterns' compiling to their first use
// (the built-in files, whose patterns the tests compile).
func (f *File) apply(base *Profile, lazy bool) (*Profile, error) {
	out := &Profile{Name: f.Name}
	if base != nil {
		out = base.clone()
	} else if !f.Sets("command") {
		return nil, &FileError{File: f.Path, Key: "command",
			Err: fmt.Errorf("no built-in agent is named %q, so this file defines a new one, and it needs the argv that starts it (e.g. command = [%q])", f.Name, f.Name)}
	}
	src := Origin{File: f.Path, Builtin: f.Builtin}
	d := decoder{profile: f.Name, set: out.newOrigins(src, f.doc).set}
	if err := d.object(reflect.ValueOf(out).Elem(), f.doc.values, ""); err != nil {
		return nil, f.keyError(err)
	}
	out.Name = f.Name
	out.sources = append(out.sources[:len(out.sources):len(out.sources)], src)
	out.re = nil
	compile := out.Compile
	if lazy {
		compile = out.compileLazy
	}
	if err := compile(); err != nil {
		return nil, f.keyError(err)
	}
	return out, nil
}

// keyError places a profile's key error in the file: its line (or the
// line of the nearest key above it the file sets).
func (f *File) keyError(err error) error {
	var ke *keyError
	if !errors.As(err, &ke) {
		return &FileError{File: f.Path, Err: err}
	}
	e := ke.err
	if ke.unknown {
		e = fmt.Errorf("unknown key (%w)", ke.err)
	}
	return &FileError{File: f.Path, Line: f.doc.line(ke.key), Key: ke.key, Err: e}
}
