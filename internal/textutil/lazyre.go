package textutil

import (
	"regexp"
	"sync"
)

// LazyRegexp returns a Regexp that compiles expr the first time its Re is
// called. A package-level regexp.MustCompile runs in the package's init,
// in every runner process (a hook, `runner version`, a door call) whether
// or not it ever matches; this one costs nothing until used. expr must
// compile (Re panics like MustCompile otherwise, on first use): tests
// that use each one catch it.
//
// LazyRegexp is small enough to inline, so that the compiler lays
// `var re = textutil.LazyRegexp(…)` out in the binary's data: no code
// runs for it at init, no allocation (a sync.OnceValue there made 3
// allocations each, 51 in runner/profile's init: issue 51).
func LazyRegexp(expr string) *Regexp { return &Regexp{expr: expr} }

// Regexp is a regular expression compiled on first use (LazyRegexp).
type Regexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

// Re returns the compiled regexp, compiling it the first time.
func (r *Regexp) Re() *regexp.Regexp {
	r.once.Do(r.compile)
	return r.re
}

func (r *Regexp) compile() { r.re = regexp.MustCompile(r.expr) }
