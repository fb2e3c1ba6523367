//go:build runner_nogen

// The built-in profiles parsed from the agent files at their first use,
// in place of builtin_gen.go's code: a build with -tags runner_nogen, to
// write that file again when it no longer compiles (a field of Profile
// renamed): go test -tags runner_nogen -run TestBuiltinsGenerated -update.

package profile

import "sync"

// parsedBuiltins is loadBuiltins' result, made once per process.
var parsedBuiltins = sync.OnceValues(loadBuiltins)

// builtinNames are the built-in agents' names, in the order `runner
// agents` lists them.
func builtinNames() []string {
	ps := mustParsedBuiltins()
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return out
}

// makeBuiltin returns a fresh copy of the built-in profile name, its
// patterns not compiled; nil when no built-in agent is named name.
func makeBuiltin(name string) *Profile {
	for _, p := range mustParsedBuiltins() {
		if p.Name == name {
			q := p.clone()
			q.re = nil
			return q
		}
	}
	return nil
}

func mustParsedBuiltins() []*Profile {
	ps, err := parsedBuiltins()
	if err != nil {
		panic("built-in agent file: " + err.Error()) // a bug in agents/*.toml, caught by the tests
	}
	return ps
}
