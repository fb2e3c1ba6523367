package snapshots

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/fault"
)

func TestParseAge(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"30d": 30 * 24 * time.Hour, "0d": 0, "2w": 14 * 24 * time.Hour, "12h": 12 * time.Hour, "90m": 90 * time.Minute,
	} {
		if got, err := ParseAge(in); err != nil || got != want {
			t.Errorf("ParseAge(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "d", "-1d", "1.5d", "soon", "-2h"} {
		if _, err := ParseAge(in); err == nil || !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "--older-than") {
			t.Errorf("ParseAge(%q): %v, want a usage error", in, err)
		}
	}
}

// TestHint: what to do is added to the errors a user can fix, kept
// wrapped; others pass as they are.
func TestHint(t *testing.T) {
	notRepo := fmt.Errorf("/x: %w", gitsnap.ErrNotRepo)
	if err := Hint(notRepo); !errors.Is(err, gitsnap.ErrNotRepo) || !strings.Contains(err.Error(), "git init") {
		t.Errorf("not a repo: %v", err)
	}
	if err := Hint(gitsnap.ErrBareRepo); !errors.Is(err, gitsnap.ErrBareRepo) || !strings.Contains(err.Error(), "checked-out work tree") {
		t.Errorf("bare: %v", err)
	}
	other := errors.New("disk full")
	if Hint(other) != other {
		t.Error("another error changed")
	}
}

func snap(dirty bool) *gitsnap.Snapshot {
	s := &gitsnap.Snapshot{ID: "s_abc", Dir: "/src/my app", Label: "before", Base: "0123456789abcdef", Branch: "main",
		Ref: "refs/runner/snapshots/s_abc", Commit: "c0ffee", Tree: "7ree", Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Duration: 12 * time.Millisecond}
	if dirty {
		s.Dirty = true
		s.Counts.Added, s.Counts.Modified, s.Counts.Deleted = 1, 2, 3
	}
	return s
}

// TestWriteTaken: the state taken, and the commands to diff and restore,
// the directory quoted, --host kept.
func TestWriteTaken(t *testing.T) {
	var b bytes.Buffer
	WriteTaken(&b, snap(true), "b1")
	want := "snapshot s_abc of /src/my app: 6 changed paths since HEAD (1 added, 2 modified, 3 deleted) (12ms)\n" +
		"  diff:    runner snapshot --host b1 diff -C '/src/my app' s_abc\n" +
		"  restore: runner snapshot --host b1 restore -C '/src/my app' s_abc\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	WriteTaken(&b, snap(false), "")
	if !strings.Contains(b.String(), "clean (same as HEAD)") || strings.Contains(b.String(), "--host") {
		t.Errorf("clean, here: %s", b.String())
	}
}

// TestWriteListAndShow: the table's short columns, and show's fields.
func TestWriteListAndShow(t *testing.T) {
	var b bytes.Buffer
	if err := WriteList(&b, nil); err != nil || b.String() != "no snapshots\n" {
		t.Errorf("none: %q %v", b.String(), err)
	}
	b.Reset()
	unborn := snap(false)
	unborn.Base = ""
	if err := WriteList(&b, []gitsnap.Snapshot{*snap(true), *unborn}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"ID", "0123456789 ", "+1 ~2 -3", "(unborn)", "clean", "before"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	b.Reset()
	if err := WriteShow(&b, snap(true)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"id:     s_abc\n", "label:  before\n", "base:   0123456789abcdef (main)\n", "ref:    refs/runner/snapshots/s_abc\n", "tree:   7ree\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
	b.Reset()
	detached := snap(false)
	detached.Branch = ""
	WriteShow(&b, detached)
	if !strings.Contains(b.String(), "(detached HEAD)") {
		t.Errorf("detached:\n%s", b.String())
	}
	b.Reset()
	WriteShow(&b, unborn)
	if !strings.Contains(b.String(), "none (unborn HEAD)") {
		t.Errorf("unborn:\n%s", b.String())
	}
}

// TestWriteDiff: the stat to the text, the patch to the raw writer.
func TestWriteDiff(t *testing.T) {
	var out, raw bytes.Buffer
	WriteDiff(&out, &raw, &gitsnap.DiffResult{From: "s_a", To: "work tree"})
	if out.String() != "no changes from s_a to work tree\n" || raw.Len() != 0 {
		t.Errorf("none: %q %q", out.String(), raw.String())
	}
	out.Reset()
	WriteDiff(&out, &raw, &gitsnap.DiffResult{Files: []gitsnap.Change{{}}, Stat: " a | 1 +\n", Patch: "+x\r\n"})
	if out.String() != " a | 1 +\n\n" || raw.String() != "+x\r\n" {
		t.Errorf("diff: %q %q", out.String(), raw.String())
	}
}

// TestRestoreAndPrune: the question, the undo command, the pruned list.
func TestRestoreAndPrune(t *testing.T) {
	s := snap(false)
	if q := RestoreQuestion(s); !strings.HasPrefix(q, "Restore s_abc (") || !strings.HasSuffix(q, "[y/N] ") {
		t.Errorf("question %q", q)
	}
	var b bytes.Buffer
	WriteRestored(&b, s, &gitsnap.RestoreResult{Undo: &gitsnap.Snapshot{ID: "s_undo"}, Skipped: []gitsnap.Change{{Path: "vendor/lib"}}}, "")
	for _, want := range []string{"restored s_abc in /src/my app: 0 paths", "skipped submodule vendor/lib", "undo with: runner snapshot restore -C '/src/my app' s_undo\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
	b.Reset()
	WritePruned(&b, []gitsnap.Snapshot{*s}, "2w")
	if !strings.HasPrefix(b.String(), "pruned s_abc (") || !strings.HasSuffix(b.String(), "1 snapshots older than 2w pruned\n") {
		t.Errorf("pruned %q", b.String())
	}
}
