package doctor

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/runner-cli/runner/internal/textutil"
)

// semver is a version's major, minor and patch. Pre-release and build
// qualifiers are dropped on both sides of a match: Node releases carry
// none, and a range that names one (">=22.0.0-0") means its version.
type semver [3]int

func (v semver) String() string { return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]) }

func (v semver) compare(w semver) int {
	for i := range v {
		switch {
		case v[i] < w[i]:
			return -1
		case v[i] > w[i]:
			return 1
		}
	}
	return 0
}

var nodeVersionRE = textutil.LazyRegexp(`^v?(\d+)\.(\d+)\.(\d+)`)

// parseNodeVersion reads `node --version`'s "v20.19.2" (the "v" optional).
func parseNodeVersion(s string) (semver, error) {
	m := nodeVersionRE.Re().FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return semver{}, fmt.Errorf("not a node version: %q", s)
	}
	var v semver
	for i := range v {
		v[i], _ = strconv.Atoi(m[i+1])
	}
	return v, nil
}

// comparator is one bound: op is ">=", ">", "<", "<=" or "=".
type comparator struct {
	op string
	v  semver
}

func (c comparator) match(v semver) bool {
	d := v.compare(c.v)
	switch c.op {
	case ">=":
		return d >= 0
	case ">":
		return d > 0
	case "<":
		return d < 0
	case "<=":
		return d <= 0
	default:
		return d == 0
	}
}

// semverRange is npm's range syntax as packages write it in engines: sets
// of bounds joined by "||"; a version matches when every bound of one set
// holds. An empty set matches every version.
type semverRange [][]comparator

// never is a bound no version meets (">*", "<*").
var never = comparator{"<", semver{}}

func (r semverRange) match(v semver) bool {
	for _, set := range r {
		ok := true
		for _, c := range set {
			if !c.match(v) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

var (
	hyphenRE  = textutil.LazyRegexp(`^(\S+)\s+-\s+(\S+)$`)
	opSpaceRE = textutil.LazyRegexp(`(>=|<=|>|<|=|~>|~|\^)\s+`)
	simpleRE  = textutil.LazyRegexp(`^(>=|<=|>|<|=|~>|~|\^)?v?(.*)$`)
	partialRE = textutil.LazyRegexp(`^([xX*]|\d+)(?:\.([xX*]|\d+)(?:\.([xX*]|\d+)(?:[-+][0-9A-Za-z.+-]*)?)?)?$`)
)

// parseSemverRange reads the forms npm's semver accepts in engines:
// ">=22", ">=18.0.0", "^20.10 || >=22", ">= 20", "20.x", "~20.1", "*",
// "", "18 - 20", "<23 >=20".
func parseSemverRange(s string) (semverRange, error) {
	var r semverRange
	for _, part := range strings.Split(s, "||") {
		part = strings.TrimSpace(part)
		if m := hyphenRE.Re().FindStringSubmatch(part); m != nil {
			set, err := hyphen(m[1], m[2])
			if err != nil {
				return nil, fmt.Errorf("range %q: %w", s, err)
			}
			r = append(r, set)
			continue
		}
		set := []comparator{}
		for _, f := range strings.Fields(opSpaceRE.Re().ReplaceAllString(part, "$1")) {
			cs, err := simple(f)
			if err != nil {
				return nil, fmt.Errorf("range %q: %w", s, err)
			}
			set = append(set, cs...)
		}
		r = append(r, set)
	}
	return r, nil
}

// partial reads "1", "1.2", "1.2.3", "1.x", "*": the version with what is
// missing as 0, and how many numbers were given (up to the first x).
func partial(s string) (semver, int, error) {
	m := partialRE.Re().FindStringSubmatch(s)
	if m == nil {
		return semver{}, 0, fmt.Errorf("not a version: %q", s)
	}
	var v semver
	n := 0
	for i := range v {
		x := m[i+1]
		if x == "" || x == "x" || x == "X" || x == "*" {
			break
		}
		v[i], _ = strconv.Atoi(x)
		n++
	}
	return v, n, nil
}

// next is the first version past every one v's first n numbers cover:
// next(1.2.0, 2) is 1.3.0.
func next(v semver, n int) semver {
	switch n {
	case 1:
		return semver{v[0] + 1, 0, 0}
	case 2:
		return semver{v[0], v[1] + 1, 0}
	default:
		return semver{v[0], v[1], v[2] + 1}
	}
}

// simple turns one comparator of a range into bounds.
func simple(s string) ([]comparator, error) {
	m := simpleRE.Re().FindStringSubmatch(s)
	op := m[1]
	v, n, err := partial(m[2])
	if err != nil {
		return nil, err
	}
	if n == 0 { // "*", "x", ">=*": any; ">*", "<*": none
		if op == ">" || op == "<" {
			return []comparator{never}, nil
		}
		return nil, nil
	}
	switch op {
	case "", "=":
		if n == 3 {
			return []comparator{{"=", v}}, nil
		}
		return []comparator{{">=", v}, {"<", next(v, n)}}, nil
	case ">=", "<":
		return []comparator{{op, v}}, nil
	case ">":
		if n == 3 {
			return []comparator{{">", v}}, nil
		}
		return []comparator{{">=", next(v, n)}}, nil
	case "<=":
		if n == 3 {
			return []comparator{{"<=", v}}, nil
		}
		return []comparator{{"<", next(v, n)}}, nil
	case "~", "~>":
		return []comparator{{">=", v}, {"<", next(v, min(n, 2))}}, nil
	case "^":
		// Up to the next change of the first number that is not 0 (or of
		// the last number given).
		upto := 1
		switch {
		case v[0] > 0 || n == 1:
		case v[1] > 0 || n == 2:
			upto = 2
		default:
			upto = 3
		}
		return []comparator{{">=", v}, {"<", next(v, upto)}}, nil
	}
	return nil, errors.New("unknown operator in " + s)
}

// hyphen is "A - B": from A to B inclusive, B's missing numbers any.
func hyphen(a, b string) ([]comparator, error) {
	lo, nlo, err := partial(strings.TrimPrefix(a, "v"))
	if err != nil {
		return nil, err
	}
	hi, nhi, err := partial(strings.TrimPrefix(b, "v"))
	if err != nil {
		return nil, err
	}
	var set []comparator
	if nlo > 0 {
		set = append(set, comparator{">=", lo})
	}
	switch {
	case nhi == 3:
		set = append(set, comparator{"<=", hi})
	case nhi > 0:
		set = append(set, comparator{"<", next(hi, nhi)})
	}
	return set, nil
}

// suggestMajor is the Node major version to install for r, seen from the
// version that runs now: the nearest newer line whose newest release
// matches (an even one, Node's long-term lines, when one does), else the
// nearest older one (a range with an upper bound). ok is false when no
// major from 0 to cur+40 matches.
func suggestMajor(r semverRange, cur semver) (int, bool) {
	matches := func(m int) bool { return r.match(semver{m, 1 << 30, 1 << 30}) }
	firstOdd := -1
	for m := cur[0]; m <= cur[0]+40; m++ {
		if !matches(m) {
			continue
		}
		if m%2 == 0 {
			return m, true
		}
		if firstOdd < 0 {
			firstOdd = m
		}
	}
	if firstOdd >= 0 {
		return firstOdd, true
	}
	for m := cur[0] - 1; m >= 0; m-- {
		if matches(m) {
			return m, true
		}
	}
	return 0, false
}
