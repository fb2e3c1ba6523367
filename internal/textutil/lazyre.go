package textutil

import (
	"regexp"
	"sync"
)

// LazyRegexp returns a function that compiles expr the first time it is
// called and returns the same *regexp.Regexp ever after. A package-level
// regexp.MustCompile runs in the package's init, in every runner process
// (a hook, `runner version`, a door call) whether or not it ever matches;
// this one costs nothing until used. expr must compile (it panics like
// MustCompile otherwise, on first use): tests that use each one catch it.
func LazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
