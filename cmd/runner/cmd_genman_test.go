//go:build gendocs

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/clock"
)

func TestGenMan(t *testing.T) {
	dir := t.TempDir()
	a, _ := newApp(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}, func(string) string { return "" })
	date := clock.Now().UTC() // any date: the pages carry the one given
	month := date.Format("Jan 2006")
	opts := genManOptions{dir: dir, root: a.newRootCmd(), source: "runner v1.2.3", date: &date}
	if err := a.runGenMan(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		page string
		want []string // substrings, in order; nil: no such page
	}{
		{"runner.1", []string{`.TH "RUNNER" "1" "` + month + `" "runner v1.2.3" "runner manual"`, "runner - Drive CLI coding agents in tmux panes",
			".SH SYNOPSIS", ".SH DESCRIPTION", "private tmux server", ".SH OPTIONS", "--socket", ".SH SEE ALSO", "runner-dispatch(1)", "runner-version(1)"}},
		{"runner-dispatch.1", []string{`.TH "RUNNER-DISPATCH" "1" "` + month + `"`, ".SH OPTIONS", "--timeout", ".SH OPTIONS INHERITED FROM PARENT COMMANDS", "--socket", ".SH SEE ALSO", "runner(1)"}},
		{"runner-version.1", []string{".SH NAME", "--json"}},
		{"runner-snapshot-diff.1", []string{".SH NAME", "runner-snapshot-diff - ", "runner-snapshot(1)"}},
		{"runner-agent-sim.1", nil}, // hidden
		{"runner-gen-man.1", nil},   // hidden
		{"runner-help.1", nil},
	}
	for _, tt := range tests {
		b, err := os.ReadFile(filepath.Join(dir, tt.page))
		if tt.want == nil {
			if err == nil {
				t.Errorf("%s written; want none", tt.page)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.page, err)
			continue
		}
		rest := string(b)
		for _, w := range tt.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("%s: no %q (after the previous ones) in:\n%s", tt.page, w, b)
				break
			}
			rest = rest[i+len(w):]
		}
		if strings.Contains(string(b), "Auto generated") {
			t.Errorf("%s says it was auto generated:\n%s", tt.page, b)
		}
	}
}

// TestGenManCommand runs the hidden command through Main.
func TestGenManCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "man")
	if code, out, errOut := runMain(t, "", "gen-man", dir); code != 0 || out != "" || errOut != "" {
		t.Fatalf("gen-man = %d, %q, %q", code, out, errOut)
	}
	for _, page := range []string{"runner.1", "runner-dispatch.1", "runner-completion-zsh.1"} { // completion: cobra adds it as the command runs
		if _, err := os.Stat(filepath.Join(dir, page)); err != nil {
			t.Error(err)
		}
	}
	if code, _, errOut := runMain(t, "", "gen-man"); code != 2 || !strings.Contains(errOut, "accepts 1 arg") {
		t.Errorf("gen-man without DIR = %d, %q; want 2", code, errOut)
	}
	if _, out, _ := runMain(t, "", "--help"); strings.Contains(out, "gen-man") {
		t.Errorf("gen-man listed in --help:\n%s", out)
	}
}
