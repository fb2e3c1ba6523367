package textutil

import (
	"regexp"
	"strings"
	"testing"
)

// TestIsNameIsItsRegexp holds IsName to the regexps it replaced, on names
// near every edge and on random ones.
func TestIsNameIsItsRegexp(t *testing.T) {
	cases := []struct {
		max   int
		upper bool
		punct string
		re    string
	}{
		{200, true, "._:-", `^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$`},
		{64, false, "._-", `^[a-z0-9][a-z0-9._-]{0,63}$`},
		{64, true, "_-", `^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`},
	}
	inputs := []string{"", "a", "A", "0", "-", ".a", "a.", "a-b_c.d:e", "a/b", "a b", "é", "a\n", "Z9",
		strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 65),
		strings.Repeat("b", 199), strings.Repeat("b", 200), strings.Repeat("b", 201), "a" + strings.Repeat(".", 199)}
	const alphabet = "aZ09._:-/ \x00é"
	seed := uint32(1)
	for range 2000 {
		var b strings.Builder
		seed = seed*1664525 + 1013904223
		for n := seed % 12; n > 0; n-- {
			seed = seed*1664525 + 1013904223
			b.WriteByte(alphabet[seed%uint32(len(alphabet))])
		}
		inputs = append(inputs, b.String())
	}
	for _, c := range cases {
		re := regexp.MustCompile(c.re)
		for _, s := range inputs {
			if got, want := IsName(s, c.max, c.upper, c.punct), re.MatchString(s); got != want {
				t.Errorf("IsName(%q, %d, %v, %q) = %v, the regexp %s says %v", s, c.max, c.upper, c.punct, got, c.re, want)
			}
		}
	}
}
