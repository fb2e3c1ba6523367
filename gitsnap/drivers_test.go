package gitsnap

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestNothingOfTheTreeRuns: a repository whose config (as an agent would
// write it) names programs for a filter, fsmonitor, a textconv, an
// external diff and a merge driver, and whose attributes apply them: no
// snapshot, change list, diff or commit of ours runs any of them, and the
// files are recorded as they are.
func TestNothingOfTheTreeRuns(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	marks := t.TempDir()
	mark := func(name string) string { return "touch " + filepath.Join(marks, name) + "; cat" }
	config := strings.Join([]string{
		"[filter \"x\"]", "\tclean = " + mark("clean"), "\tsmudge = " + mark("smudge"), "\tprocess = " + mark("process"), "\trequired = true",
		"[diff \"x\"]", "\ttextconv = " + mark("textconv"), "\tcommand = " + mark("diffcmd"),
		"[merge \"x\"]", "\tdriver = " + mark("merge"),
		"[core]", "\tfsmonitor = " + mark("fsmonitor"),
		"[diff]", "\texternal = " + mark("external"),
	}, "\n") + "\n"
	f, err := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(config)
	f.Close()
	write(t, dir, ".git/info/attributes", "* filter=x diff=x merge=x\n")
	write(t, dir, ".gitattributes", "* filter=x diff=x merge=x\n")
	write(t, dir, "a.txt", "changed\n")
	write(t, dir, "b.txt", "new\n")
	ctx := t.Context()
	s, err := Take(ctx, dir, Options{ID: "t_drivers"})
	if err != nil {
		t.Fatal(err)
	}
	files := treeFiles(t, dir, s.Tree)
	if files["a.txt"].Content != "changed\n" || files["b.txt"].Content != "new\n" {
		t.Errorf("the snapshot holds %+v", files)
	}
	if _, err := Changed(ctx, dir, s.Ref, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := Diff(ctx, dir, "t_drivers", DiffOptions{Patch: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := Commit(ctx, dir, CommitOptions{TaskID: "t_drivers", Task: "a task", Snapshot: "t_drivers", All: true}); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(marks); len(ents) > 0 {
		var ran []string
		for _, e := range ents {
			ran = append(ran, e.Name())
		}
		t.Errorf("runner's git ran what the tree configures: %v", ran)
	}
}

func TestDriverOverrides(t *testing.T) {
	got := DriverOverrides("filter.x.clean\nfilter.x.smudge\ndiff.y.textconv\nmerge.z.driver\ndiff.external\ncore.x\nfilter.x.clean\nfilter.a.b.process\n")
	want := []string{"-c", "filter.x.clean=", "-c", "filter.x.required=false", "-c", "filter.x.smudge=", "-c", "diff.y.textconv=",
		"-c", "merge.z.driver=", "-c", "filter.a.b.process=", "-c", "filter.a.b.required=false"}
	if !slices.Equal(got, want) {
		t.Errorf("DriverOverrides =\n%q\nwant\n%q", got, want)
	}
}

// TestNoDrivers: a repository whose config files name no driver needs no
// git call to know it; one that does, or includes another file, is asked.
func TestNoDrivers(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	gd := filepath.Join(dir, ".git")
	if !noDrivers(gd) {
		t.Fatal("a fresh repository reads as having drivers")
	}
	for _, extra := range []string{"[filter \"x\"]\n\tclean = cat\n", "[include]\n\tpath = /elsewhere\n", "[diff \"y\"]\n\ttextconv = cat\n"} {
		cfg := filepath.Join(gd, "config")
		before, _ := os.ReadFile(cfg)
		os.WriteFile(cfg, append(before, extra...), 0o644)
		if noDrivers(gd) {
			t.Errorf("a config with %q reads as having no drivers", extra)
		}
		os.WriteFile(cfg, before, 0o644)
	}
}
