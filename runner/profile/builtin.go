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

// builtinFS holds the built-in agent files, agents/NAME.toml. After a
// change to one, run go generate ./runner/profile: it writes
// builtin_gen.go again (see TestBuiltinsGenerated), then, built from
// it, testdata/builtins.golden.json (TestBuiltinsGolden), whose diff
// shows the change.
//
//go:generate go test -run TestBuiltinsGenerated -update
//go:generate go test -run TestBuiltinsGolden -update
//go:embed agents/*.toml
var builtinFS embed.FS

// builtinOrder is the order `runner agents` lists the built-in agents in;
// an embedded file of an agent not named here comes after them, by name.
var builtinOrder = []string{"claude", "codex", "gemini", "opencode", "qwen", "aider", "shell", "sim"}

// loadBuiltins parses and checks every embedded agent file, in
// builtinOrder: what builtin_gen.go is generated from (and, built with
// -tags runner_nogen, what Builtins makes its profiles from).
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
// changed pattern needs Compile again). No file is parsed: the profiles
// are made by the Go code builtin_gen.go, generated from the agent files
// (TestBuiltinsGenerated holds the two equal), every call afresh; their
// patterns are compiled once per process, at their first use, and shared
// by every copy.
func Builtins() []*Profile {
	names := builtinNames()
	out := make([]*Profile, len(names))
	for i, n := range names {
		out[i] = newBuiltin(n)
	}
	return out
}

// BuiltinProfile returns a fresh copy of the built-in profile name.
func BuiltinProfile(name string) (*Profile, error) {
	if p := newBuiltin(name); p != nil {
		return p, nil
	}
	return FindProfile(Builtins(), name) // the error, with the known names
}

// newBuiltin is makeBuiltin's profile name with its patterns, compiled
// at their first use; nil when no built-in agent is named name.
func newBuiltin(name string) *Profile {
	p := makeBuiltin(name)
	if p != nil {
		p.re = builtinPatterns()[name]
	}
	return p
}

// builtinPatterns are the built-in profiles' patterns, by name: each
// compiled at its first use, once per process, from a profile made
// afresh for it (which no caller holds, so none can have changed it).
var builtinPatterns = sync.OnceValue(func() map[string]*compiled {
	out := map[string]*compiled{}
	for _, n := range builtinNames() {
		out[n] = &compiled{lazy: &lazyCompiled{src: func() *Profile { return makeBuiltin(n) }}}
	}
	return out
})

// builtinOrigins is the origins of a built-in profile made by
// builtin_gen.go: each of keys (the key paths the agent file sets) set
// in file, whose lines are read from the embedded file when one is
// asked for. The map is made once per process per file and shared by
// every copy, like a clone's (origins are never changed once made: a
// merge copies them first).
func builtinOrigins(file string, keys ...string) map[string]originRef {
	if m, ok := builtinOriginMaps.Load(file); ok {
		return m.(map[string]originRef)
	}
	ref := originRef{file: file, builtin: true, doc: &tomlDoc{embedded: file}}
	out := make(map[string]originRef, len(keys))
	for _, k := range keys {
		out[k] = ref
	}
	m, _ := builtinOriginMaps.LoadOrStore(file, out)
	return m.(map[string]originRef)
}

// builtinOriginMaps holds builtinOrigins' maps, by file.
var builtinOriginMaps sync.Map

// BuiltinFile returns the embedded agent file of the built-in agent name
// (its TOML text, to read or to copy as a start).
func BuiltinFile(name string) ([]byte, error) {
	b, err := builtinFS.ReadFile(path.Join("agents", name+".toml"))
	if err != nil {
		return nil, fmt.Errorf("no built-in agent %q", name)
	}
	return b, nil
}
