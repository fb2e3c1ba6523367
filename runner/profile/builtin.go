// The built-in profiles: the agent files embedded in the binary.

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
		p, err := f.Apply(nil)
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
