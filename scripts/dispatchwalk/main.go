// Command dispatchwalk counts the walk of a dispatch (issue 55 §1): the
// functions of runner a reader enters, in the order they run, following a
// foreground `runner dispatch` from its command's RunE to the supervisor.
//
// The walk: the dispatch command's RunE (cmd/runner, newDispatchCmd) is
// read call by call in the order the calls end (an argument's call before
// the call it is an argument of), only the calls that ran in a default
// dispatch (`runner dispatch --agent sim DIR TEXT`, run once with a
// coverage build: the blocks of the dispatch's own process that ran,
// in a folder that is no git repository). A call of a function or method
// declared in this module is a stop, the first time only. The walk enters
// a stop (reads its calls the same way) when the stop is on the way (it
// calls, through calls that ran, the target), or when it is in a package
// below cmd that a function on the way is in (package runner, today: all
// of its functions the dispatch calls are read); a stop in another
// package (a library: state, tmuxctl, profile, projects…) or one of
// cmd/runner's beside the way (its Env, its flags) is read by its doc,
// not entered. It ends at the target, runner's supervise (the supervision
// a foreground dispatch runs in-process and `runner supervise` runs
// detached), the last stop. Calls through function values and interfaces
// are not followed. Its numbers: the stops, the files they are in, and the
// returns (a stop in a file the walk left before that is not the previous
// stop's file).
//
// usage: go run ./scripts/dispatchwalk [-v] [-static] [-max STOPS,FILES,RETURNS] [-coverprofile FILE]
//
// -v lists the stops; -static follows every call, run or not (no build,
// no dispatch: quick, and more than a dispatch runs); -max exits 1 when a
// number is over its limit; -coverprofile keeps the dispatch's coverage
// in FILE, or reads it from FILE when it exists (the same code only).
package main

import (
	"flag"
	"fmt"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
)

// Limits are issue 55's: at most 25 stops, 15 files and 6 returns.
var Limits = Walk{Stops: make([]Stop, 25), Files: 15, Returns: 6}

func main() {
	verbose := flag.Bool("v", false, "list the stops")
	static := flag.Bool("static", false, "follow every call, run or not (no coverage build, no dispatch)")
	limits := flag.String("max", "", "STOPS,FILES,RETURNS: exit 1 when a number is over its limit")
	profile := flag.String("coverprofile", "", "keep the dispatch's coverage in FILE; an existing FILE is read instead of a new dispatch (for the same code only)")
	flag.Parse()
	root, err := os.Getwd()
	if err != nil {
		fail(err)
	}
	say := func(f string, a ...any) { fmt.Fprintf(os.Stderr, "dispatchwalk: "+f+"\n", a...) }
	wk, err := Run(root, *static, *profile, say)
	if err != nil {
		fail(err)
	}
	if *verbose {
		for i, s := range wk.Stops {
			fmt.Printf("%2d  %-45s %s:%d\n", i+1, s.Func, s.File, s.Line)
		}
	}
	fmt.Printf("%d stops in %d files, %d returns\n", len(wk.Stops), wk.Files, wk.Returns)
	if *limits != "" {
		var s, f, r int
		if _, err := fmt.Sscanf(*limits, "%d,%d,%d", &s, &f, &r); err != nil {
			fail(fmt.Errorf("-max %q: give STOPS,FILES,RETURNS: %w", *limits, err))
		}
		if len(wk.Stops) > s || wk.Files > f || wk.Returns > r {
			fmt.Printf("over the limits: %d stops, %d files, %d returns\n", s, f, r)
			os.Exit(1)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "dispatchwalk:", err)
	os.Exit(1)
}

// Run measures the walk in the module at root: of a default dispatch run
// with a coverage build, or, static, of every call.
func Run(root string, static bool, profile string, log func(string, ...any)) (Walk, error) {
	prog, err := load(root, "./cmd/runner")
	if err != nil {
		return Walk{}, err
	}
	ran := func(token.Position) bool { return true }
	if !static {
		var cov coverage
		if data, rerr := os.ReadFile(profile); profile != "" && rerr == nil {
			cov, err = parseCoverage(data)
		} else {
			cov, err = runDispatch(root, profile, log)
		}
		if err != nil {
			return Walk{}, err
		}
		ran = func(pos token.Position) bool {
			pkg := prog.dirs[filepath.Dir(pos.Filename)]
			return cov.ran(pkg+"/"+filepath.Base(pos.Filename), pos)
		}
	}
	return prog.walk(module+"/cmd/runner", "newDispatchCmd", "runner.supervise", ran)
}

// walk is the walk from the RunE of cmdFunc in package pkg to target.
func (p *program) walk(pkg, cmdFunc, target string, ran func(token.Position) bool) (Walk, error) {
	lit, err := p.entry(pkg, cmdFunc)
	if err != nil {
		return Walk{}, err
	}
	w := &walker{prog: p, ran: ran, target: target, reaches: map[*types.Func]bool{}, seen: map[string]bool{}}
	w.visit(lit.Body) // finds the way
	// Again, entering every function of the packages below cmd the way
	// passes through.
	w.enter = map[string]bool{}
	for fn, on := range w.reaches {
		if on && fn.Pkg().Path() != pkg {
			w.enter[fn.Pkg().Path()] = true
		}
	}
	w.seen, w.stops, w.reached = map[string]bool{}, nil, false
	w.visit(lit.Body)
	if !w.reached {
		return count(w.stops), fmt.Errorf("the walk never reached %s (%d stops)", target, len(w.stops))
	}
	return count(w.stops), nil
}
