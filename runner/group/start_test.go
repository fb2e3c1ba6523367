package group

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/state"
)

// fakeLauncher is a Launcher in memory: hosts by pool, carries and
// dispatches recorded, the ones named failing.
type fakeLauncher struct {
	mu         sync.Mutex
	pools      map[string][]string
	carryFails map[string]bool
	failAgent  string
	snapErr    error
	carried    []string
	dispatched []string
	saved      []*state.Group
	forgot     []string
	said       []string
}

func (l *fakeLauncher) Snapshot(_ context.Context, dir, id, label string) (*gitsnap.Snapshot, error) {
	if l.snapErr != nil {
		return nil, l.snapErr
	}
	return &gitsnap.Snapshot{ID: id, Dir: dir, Label: label, Ref: gitsnap.RefPrefix + id, Commit: "c0ffee", Base: "ba5e"}, nil
}

func (l *fakeLauncher) Hosts(_ context.Context, where string) ([]string, error) {
	if hs, ok := l.pools[where]; ok {
		return hs, nil
	}
	return nil, fmt.Errorf("no host has label %q", where)
}

func (l *fakeLauncher) Carry(_ context.Context, host, dir string, snap *gitsnap.Snapshot) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.carryFails[host] {
		return errors.New("ssh: connect to host " + host + ": connection refused")
	}
	l.carried = append(l.carried, host+":"+dir+"@"+snap.Commit)
	return nil
}

func (l *fakeLauncher) Dispatch(_ context.Context, g *state.Group, i int, agent, where string) (*state.Task, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if agent == l.failAgent {
		return nil, errors.New("no such agent there")
	}
	l.dispatched = append(l.dispatched, fmt.Sprintf("%d %s %s %s", i, agent, where, g.ID))
	return &state.Task{ID: fmt.Sprintf("t_cand%04d", i)}, nil
}

func (l *fakeLauncher) Save(_ context.Context, g *state.Group) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := *g
	l.saved = append(l.saved, &c)
	return nil
}

func (l *fakeLauncher) Forget(_ context.Context, id string) error {
	l.forgot = append(l.forgot, id)
	return nil
}

func (l *fakeLauncher) Say(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.said = append(l.said, fmt.Sprintf(format, args...))
}

// TestStartAcrossHosts: the snapshot is taken here and carried to every
// host of the pool (one that cannot be reached is said and left out; those
// reached recorded on the group, for gc),
// then each candidate is dispatched to the pool, in the order given; a
// candidate that cannot be dispatched is said and the group goes on.
func TestStartAcrossHosts(t *testing.T) {
	l := &fakeLauncher{pools: map[string][]string{"label:build": {"a", "b", "c"}}, carryFails: map[string]bool{"c": true}, failAgent: "nosuch"}
	g := &state.Group{ID: "g_start001", Dir: "/srv/api", Text: "fix it"}
	out, err := Start(t.Context(), l, StartRequest{Group: g, Agents: []string{"sim", "nosuch", "sim", "sim"}, Where: "label:build"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(out.Tasks, ","); got != "t_cand0000,t_cand0002,t_cand0003" {
		t.Errorf("tasks %s", got)
	}
	if len(l.carried) != 2 || !strings.Contains(strings.Join(l.carried, " "), "a:/srv/api@c0ffee") {
		t.Errorf("carried %v", l.carried)
	}
	for _, d := range l.dispatched {
		if !strings.Contains(d, " label:build g_start001") {
			t.Errorf("dispatched %q: not to the pool", d)
		}
	}
	said := strings.Join(l.said, "\n")
	if !strings.Contains(said, "snapshot not carried to host c: ssh: connect") || !strings.Contains(said, "candidate 2 (nosuch): no such agent there") {
		t.Errorf("said:\n%s", said)
	}
	if strings.Join(l.saved[0].Carried, ",") != "a,b" {
		t.Errorf("recorded carried to %q, want a,b (not c)", l.saved[0].Carried)
	}
	if len(l.saved) != 2 || len(l.saved[0].Tasks) != 0 || len(l.saved[1].Tasks) != 3 {
		t.Errorf("saved %d times: %+v", len(l.saved), l.saved)
	}
}

// TestStartRefusals: a snapshot that fails, a pool no host of which the
// snapshot reaches, and a group none of whose candidates could be
// dispatched (then forgotten) are errors; here, nothing is carried.
func TestStartRefusals(t *testing.T) {
	req := func(where string, agents ...string) StartRequest {
		return StartRequest{Group: &state.Group{ID: "g_start002", Dir: "/srv/api"}, Agents: agents, Where: where}
	}
	l := &fakeLauncher{snapErr: fmt.Errorf("not a repository: %w", ErrNotRepo)}
	if _, err := Start(t.Context(), l, req("", "sim")); !errors.Is(err, ErrNotRepo) {
		t.Errorf("no repository: %v", err)
	}
	l = &fakeLauncher{pools: map[string][]string{"any": {"a", "b"}}, carryFails: map[string]bool{"a": true, "b": true}}
	_, err := Start(t.Context(), l, req("any", "sim"))
	if err == nil || !strings.Contains(err.Error(), "its snapshot reached no host of any") || len(l.dispatched) != 0 {
		t.Errorf("no host reached: %v, dispatched %v", err, l.dispatched)
	}
	l = &fakeLauncher{pools: map[string][]string{}}
	if _, err := Start(t.Context(), l, req("label:nosuch", "sim")); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("unknown pool: %v", err)
	}
	l = &fakeLauncher{failAgent: "sim"}
	_, err = Start(t.Context(), l, req("", "sim", "sim"))
	if err == nil || !strings.Contains(err.Error(), "no candidate could be dispatched") || len(l.forgot) != 1 || len(l.carried) != 0 {
		t.Errorf("none dispatched: %v, forgot %v, carried %v", err, l.forgot, l.carried)
	}
}
