package gc

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/internal/transport"
	"github.com/runner-cli/runner/runner/group"
	"github.com/runner-cli/runner/state"
)

// gitIn runs git in dir for a test.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// elsewhere is a host on this machine whose repository at a path is
// another one: every word of a command naming from (or below it) names to
// instead.
type elsewhere struct{ from, to string }

func (e elsewhere) Command(ctx context.Context, argv ...string) *exec.Cmd {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = strings.ReplaceAll(a, e.from, e.to)
	}
	return transport.Local{}.Command(ctx, out...)
}

func (e elsewhere) String() string { return "elsewhere" }

// refsIn lists the refs of dir under refs/runner/.
func refsIn(t *testing.T, dir string) string {
	t.Helper()
	return gitIn(t, dir, "for-each-ref", "--format=%(refname)", "refs/runner/")
}

// TestPickedRefPrefixIsGroups: gc removes the refs a pick makes.
func TestPickedRefPrefixIsGroups(t *testing.T) {
	if PickedRefPrefix != group.PickedRefPrefix {
		t.Errorf("gc removes %q, a pick makes %q", PickedRefPrefix, group.PickedRefPrefix)
	}
}

// TestGCGroupRefs: once every candidate of a group across hosts has gone,
// gc removes its snapshot on each host it was carried to (through
// gitsnap's remote path: host "a" is this machine through a transport
// that puts another repository at the group's path) and the picks' tips
// here; the group's own snapshot here stays; a host that cannot be
// reached is warned about and kept, and the next gc finishes it and marks
// the group (a host whose repository is the one here removes nothing). A
// group with a candidate at work, and a group of this machine only, are
// left alone; --dry-run lists and changes nothing.
func TestGCGroupRefs(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "add", "a.txt")
	gitIn(t, dir, "commit", "-q", "-m", "one")
	for _, id := range []string{"g_gone0001", "g_busy0001", "g_here0001"} {
		if _, err := gitsnap.Take(ctx, dir, gitsnap.Options{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	there := t.TempDir()
	gitIn(t, there, "clone", "-q", dir, ".")
	for _, id := range []string{"g_gone0001", "g_busy0001"} {
		gitIn(t, there, "fetch", "-q", dir, gitsnap.RefPrefix+id+":"+gitsnap.RefPrefix+id)
	}
	gitIn(t, dir, "update-ref", PickedRefPrefix+"t_gone0001", "HEAD")
	gitIn(t, dir, "update-ref", PickedRefPrefix+"t_busy0001", "HEAD")
	w.task("t_gone0001", state.StatusDone, time.Hour, "a", "")
	w.task("t_gone0002", state.StatusFailed, time.Hour, "down", "")
	w.task("t_busy0001", state.StatusDone, time.Hour, "a", "")
	w.task("t_busy0002", state.StatusRunning, 0, "a", "")
	w.task("t_here0001", state.StatusDone, time.Hour, "", "")
	groups := []*state.Group{
		{ID: "g_gone0001", Dir: dir, Tasks: []string{"t_gone0001", "t_gone0002", "t_pruned01"}, Carried: []string{"a", "down"}},
		{ID: "g_busy0001", Dir: dir, Tasks: []string{"t_busy0001", "t_busy0002"}, Carried: []string{"a"}},
		{ID: "g_here0001", Dir: dir, Tasks: []string{"t_here0001"}},
	}
	if err := w.store.UpdateGroups(ctx, func(gs map[string]*state.Group) error {
		for _, g := range groups {
			gs[g.ID] = g
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	down := true
	w.gitOn = func(ctx context.Context, host string) (context.Context, error) {
		switch {
		case host == "":
			return ctx, nil
		case host == "down" && down:
			return nil, errors.New("host down (u@down): host unreachable")
		}
		return gitsnap.On(ctx, elsewhere{dir, there}), nil
	}
	before, beforeThere := refsIn(t, dir), refsIn(t, there)

	res, err := Run(ctx, w.d, Options{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Refs) != 2 || refsIn(t, dir) != before || refsIn(t, there) != beforeThere {
		t.Errorf("dry run: refs %+v; refs now:\n%s", res.Refs, refsIn(t, dir))
	}
	var out bytes.Buffer
	WriteText(&out, res, false, time.Time{})
	if !strings.Contains(out.String(), "ref refs/runner/snapshots/g_gone0001 would be removed on host a (group g_gone0001 has gone)") {
		t.Errorf("dry run's text:\n%s", out.String())
	}

	w.warned = nil
	if res, err = Run(ctx, w.d, Options{}); err != nil {
		t.Fatal(err)
	}
	want := []GroupRef{{Group: "g_gone0001", Ref: PickedRefPrefix + "t_gone0001"}, {Group: "g_gone0001", Host: "a", Ref: gitsnap.RefPrefix + "g_gone0001"}}
	if len(res.Refs) != 2 || res.Refs[0] != want[0] || res.Refs[1] != want[1] {
		t.Errorf("refs removed %+v, want %+v", res.Refs, want)
	}
	left := refsIn(t, dir)
	for _, r := range []string{gitsnap.RefPrefix + "g_busy0001", gitsnap.RefPrefix + "g_here0001", PickedRefPrefix + "t_busy0001", gitsnap.RefPrefix + "g_gone0001"} {
		if !strings.Contains(left, r) {
			t.Errorf("%s removed here: a group not gone, of this machine, or the group's own snapshot here", r)
		}
	}
	if strings.Contains(left, "t_gone0001") {
		t.Errorf("refs left here:\n%s", left)
	}
	if leftThere := refsIn(t, there); leftThere != gitsnap.RefPrefix+"g_busy0001" {
		t.Errorf("refs left on host a:\n%s", leftThere)
	}
	if len(w.warned) != 1 || !strings.Contains(w.warned[0], "its snapshot on host down (kept for the next gc): host down (u@down): host unreachable") {
		t.Errorf("warned %q", w.warned)
	}
	g, _ := w.store.FindGroup(ctx, "g_gone0001")
	if strings.Join(g.Carried, ",") != "down" || !g.RefsDropped.IsZero() {
		t.Errorf("after the first gc: carried %q, dropped %v", g.Carried, g.RefsDropped)
	}

	// a host on this machine whose repository is the one here: the
	// group's snapshot here stays
	down = false
	w.gitOn = func(ctx context.Context, host string) (context.Context, error) {
		if host == "" {
			return ctx, nil
		}
		return gitsnap.On(ctx, transport.Local{}), nil
	}
	if res, err = Run(ctx, w.d, Options{}); err != nil {
		t.Fatal(err)
	}
	g, _ = w.store.FindGroup(ctx, "g_gone0001")
	if len(g.Carried) != 0 || g.RefsDropped.IsZero() {
		t.Errorf("after the second gc: carried %q, dropped %v", g.Carried, g.RefsDropped)
	}
	if !strings.Contains(refsIn(t, dir), gitsnap.RefPrefix+"g_gone0001") || len(res.Refs) != 0 {
		t.Errorf("a host on this machine: removed %+v; here:\n%s", res.Refs, refsIn(t, dir))
	}
	if b, _ := w.store.FindGroup(ctx, "g_busy0001"); len(b.Carried) != 1 || !b.RefsDropped.IsZero() {
		t.Errorf("the busy group: %+v", b)
	}
}
