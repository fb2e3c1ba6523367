package profile

import (
	"strconv"
	"strings"

	"github.com/runner-cli/runner/internal/textutil"
)

var versionRE = textutil.LazyRegexp(`\d+(?:\.\d+)+`)

// CompareVersions compares the first dotted version number in a and in b
// ("2.1.332 (Claude Code)", "codex-cli 0.171.0"): -1, 0 or 1; ok is false
// when either has none.
func CompareVersions(a, b string) (cmp int, ok bool) {
	va, vb := versionRE.Re().FindString(a), versionRE.Re().FindString(b)
	if va == "" || vb == "" {
		return 0, false
	}
	pa, pb := strings.Split(va, "."), strings.Split(vb, ".")
	for i := range max(len(pa), len(pb)) {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		switch {
		case x < y:
			return -1, true
		case x > y:
			return 1, true
		}
	}
	return 0, true
}
