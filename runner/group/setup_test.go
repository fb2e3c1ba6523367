package group

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/statetest"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/state"
)

// TestSetupRecords: Save records a new group whole and then only its
// candidates; Forget removes it. Hosts are the host named when it is
// registered, or a pool's members not drained, in name order.
func TestSetupRecords(t *testing.T) {
	store := statetest.Store(t)
	ctx := t.Context()
	if err := store.UpdateHosts(ctx, func(hs map[string]*state.Host) error {
		hs["b"] = &state.Host{Name: "b", Destination: "u@b", Labels: []string{"gpu"}}
		hs["a"] = &state.Host{Name: "a", Destination: "u@a", Labels: []string{"gpu"}}
		hs["c"] = &state.Host{Name: "c", Destination: "u@c", Drained: true}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	r := Setup{Store: store, Pool: hosts.NewPool(store)}
	g := &state.Group{ID: "g_rec00001", Dir: "/repo", Text: "fix it"}
	if err := r.Save(ctx, g); err != nil {
		t.Fatal(err)
	}
	later := &state.Group{ID: g.ID, Tasks: []string{"t_1", "t_2"}}
	if err := r.Save(ctx, later); err != nil {
		t.Fatal(err)
	}
	got, err := store.FindGroup(ctx, g.ID)
	if err != nil || got.Dir != "/repo" || got.Text != "fix it" || !slices.Equal(got.Tasks, []string{"t_1", "t_2"}) {
		t.Errorf("saved %+v, %v: want the group whole with its candidates", got, err)
	}
	if err := r.Forget(ctx, g.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := store.FindGroup(ctx, g.ID); err == nil {
		t.Error("a group forgotten is still recorded")
	}
	for _, tc := range []struct {
		where, want string
		usage       bool
	}{
		{where: "a", want: "a"},
		{where: "any", want: "a b"},
		{where: "label:gpu", want: "a b"},
		{where: "label:tpu", usage: true},
		{where: "nowhere", usage: true},
	} {
		hs, err := r.Hosts(ctx, tc.where)
		if tc.usage != errors.Is(err, fault.ErrUsage) || (err == nil && strings.Join(hs, " ") != tc.want) {
			t.Errorf("Hosts(%q) = %v, %v; want %q (usage error %v)", tc.where, hs, err, tc.want, tc.usage)
		}
	}
}

// TestSetupSnapshots: the snapshot is taken here (the user's uncommitted work
// in it, nothing of theirs changed) and carried to a host's clone under
// its ref; a host that cannot be reached is the error.
func TestSetupSnapshots(t *testing.T) {
	ctx := t.Context()
	here := repoHere(t)
	there := filepath.Join(t.TempDir(), "there")
	git(t, filepath.Dir(there), "clone", "-q", here, there)
	s := Setup{Pool: poolHere{}}
	snap, err := s.Snapshot(ctx, here, "g_snap0001", "group fix it")
	if err != nil {
		t.Fatal(err)
	}
	if got := git(t, here, "show", snap.Ref+":mine.txt"); got != "the user's own work" {
		t.Errorf("the snapshot's mine.txt: %q", got)
	}
	if st := git(t, here, "status", "--porcelain"); st != "?? mine.txt" {
		t.Errorf("the user's work tree after the snapshot: %q", st)
	}
	if err := s.Carry(ctx, "h", there, snap); err != nil {
		t.Fatal(err)
	}
	if got := git(t, there, "rev-parse", snap.Ref); got != snap.Commit {
		t.Errorf("the ref there is at %s, want %s", got, snap.Commit)
	}
	if err := s.Carry(ctx, "gone", there, snap); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("a host gone: %v", err)
	}
}

// poolHere is a Setup's hosts, their git as fakeHosts'.
type poolHere struct{ *hosts.Pool }

func (poolHere) GitOn(ctx context.Context, host string) (context.Context, error) {
	return hostCtx(ctx, host)
}
