package runner

import (
	"regexp"
	"testing"
)

func TestMatchRuleAndDialogLine(t *testing.T) {
	sim, err := FindProfile(Builtins(), "sim")
	if err != nil {
		t.Fatal(err)
	}
	rules := []*regexp.Regexp{regexp.MustCompile(`^Create \w+\.txt`), regexp.MustCompile(`(?s)Done: x.*Run tests`)}
	for _, tc := range []struct {
		question, rule, line string
	}{
		// The agent printed something above its question.
		{"Done: Other active runner tasks (2):\nCreate ok.txt?\n❯ 1. Yes\n  2. No", `^Create \w+\.txt`, "Create ok.txt?"},
		{"Create a.txt?\n❯ 1. Yes\n  2. No", `^Create \w+\.txt`, "Create a.txt?"},
		{"Delete everything?\n❯ 1. Yes\n  2. No", "", "Delete everything?"},
		// A rule over the whole text still works.
		{"Done: x\nRun tests?\n❯ 1. Yes\n  2. No", `(?s)Done: x.*Run tests`, "Run tests?"},
		// The trust dialog's own line is its question.
		{"Do you trust the files in this folder?\n❯ 1. Yes, proceed\n  2. No, exit", "", "Do you trust the files in this folder?"},
		{"", "", ""},
	} {
		if got := matchRule(rules, tc.question); got != tc.rule {
			t.Errorf("matchRule(%q) = %q, want %q", tc.question, got, tc.rule)
		}
		if got := dialogLine(sim, tc.question); got != tc.line {
			t.Errorf("dialogLine(%q) = %q, want %q", tc.question, got, tc.line)
		}
	}
}
