// The built-in profiles: the agent files embedded in the binary.
//
// The screen patterns in them were built from the labelled real screens in
// ../shared/screens (captured with tmux 3.3a, pane 120x40: Claude Code
// 2.1.197, Codex CLI 0.169.0, Gemini CLI 0.61.0, opencode 1.18.33, Qwen Code
// 0.15.10, bash 5.2.15; see its INDEX.md) and testdata/screens-real, and
// every one of those screens is a case in detect_test.go or
// detect_real_test.go. The flags were checked against the sources cited at
// the top of each file. Aider has no captured screens: its patterns follow
// its documented prompts and are the least certain.

package profile

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sync"
)

// builtinFS holds the built-in agent files, agents/NAME.toml.
//
//go:embed agents/*.toml
var builtinFS embed.FS

// builtinOrder is the order `runner agents` lists the built-in agents in;
// an embedded file of an agent not named here comes after them, by name.
var builtinOrder = []string{"claude", "codex", "gemini", "opencode", "qwen", "aider", "shell", "sim"}

// loadBuiltins parses and compiles every embedded agent file, in
// builtinOrder.
func loadBuiltins() ([]*Profile, error) {
	names, err := fs.Glob(builtinFS, "agents/*.toml")
	if err != nil {
		return nil, err
	}
	rank := func(n string) int {
		if i := slices.Index(builtinOrder, n); i >= 0 {
			return i
		}
		return len(builtinOrder)
	}
	var out []*Profile
	for _, n := range names {
		data, err := builtinFS.ReadFile(n)
		if err != nil {
			return nil, err
		}
		f, err := ParseFile(n, data)
		if err != nil {
			return nil, err
		}
		f.Builtin = true
		p, err := f.apply(nil, true)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	slices.SortStableFunc(out, func(a, b *Profile) int {
		if d := rank(a.Name) - rank(b.Name); d != 0 {
			return d
		}
		return cmpString(a.Name, b.Name)
	})
	return out, nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Builtins returns fresh, compiled copies of the built-in profiles, in the
// order `runner agents` lists them. Callers may modify what they get (a
// changed pattern needs Compile again). The embedded files are parsed and
// compiled once per process; each call copies the result.
func Builtins() []*Profile {
	ps, err := builtinSet()
	if err != nil {
		panic("built-in agent file: " + err.Error()) // a bug in agents/*.toml, caught by the tests
	}
	out := make([]*Profile, len(ps))
	for i, p := range ps {
		out[i] = p.clone()
	}
	return out
}

// BuiltinProfile returns a fresh copy of the built-in profile name.
func BuiltinProfile(name string) (*Profile, error) {
	return FindProfile(Builtins(), name)
}

// builtinSet is loadBuiltins' result, made once per process: the files
// are constant, and every command reads them (often more than once).
var builtinSet = sync.OnceValues(loadBuiltins)

// BuiltinFile returns the embedded agent file of the built-in agent name
// (its TOML text, to read or to copy as a start).
func BuiltinFile(name string) ([]byte, error) {
	b, err := builtinFS.ReadFile(path.Join("agents", name+".toml"))
	if err != nil {
		return nil, fmt.Errorf("no built-in agent %q", name)
	}
	return b, nil
}
