package importcheck

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestArchitectureRulesHeld keeps docs/architecture.md's rules table true
// (issue 55 §6): every row names what holds it, a test or a script, and
// every test it names exists in the module.
func TestArchitectureRulesHeld(t *testing.T) {
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "\n| rule | held by |\n|---|---|\n")
	if !ok {
		t.Fatal("docs/architecture.md: no rules table (| rule | held by |)")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	tests := map[string]bool{}
	funcRE := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	err = filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return err
		}
		b, err := os.ReadFile(p)
		for _, m := range funcRE.FindAllSubmatch(b, -1) {
			tests[string(m[1])] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile("`(Test\\w+)`")
	rows := strings.Split(strings.TrimSpace(table), "\n")
	for _, row := range rows {
		cells := strings.Split(row, " | ")
		if len(cells) < 2 {
			t.Errorf("a row of the rules table that is not | rule | held by |: %q", row)
			continue
		}
		held := cells[len(cells)-1]
		ms := named.FindAllStringSubmatch(held, -1)
		if len(ms) == 0 && !strings.Contains(held, "scripts/") {
			t.Errorf("the rule %q names no test (nor script) that holds it", cells[0])
		}
		for _, m := range ms {
			if !tests[m[1]] {
				t.Errorf("the rule %q names %s, which no test file declares", cells[0], m[1])
			}
		}
	}
	if len(rows) < 10 {
		t.Errorf("only %d rows read from the rules table", len(rows))
	}
}
