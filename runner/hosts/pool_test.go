package hosts

import (
	"testing"
	"time"

	"github.com/runner-cli/runner/state"
)

func TestRankByFreeSlotsThenLoadThenMemory(t *testing.T) {
	h := func(name string, max int, labels ...string) *state.Host {
		return &state.Host{Name: name, MaxAgents: max, Labels: labels}
	}
	members := []*state.Host{h("a", 2), h("b", 4), h("c", 4), h("d", 1), h("e", 3), h("f", 0)}
	members[4].Drained = true
	use := map[string]int{"a": 2, "b": 1, "c": 1, "d": 0}
	probes := map[string]*state.HostProbe{
		"b": {OK: true, Load1: 4, Cores: 2, MemAvailKB: 100},
		"c": {OK: true, Load1: 1, Cores: 2, MemAvailKB: 50},
		"d": {OK: false, DownSince: time.Unix(0, 0)},
	}
	ranked, why := Rank(members, use, probes, map[string]string{})
	var got []string
	for _, c := range ranked {
		got = append(got, c.Host.Name)
	}
	// f: 8 free (the default); c before b: the same free slots, less load.
	if want := []string{"f", "c", "b"}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("ranked %v, want %v", got, want)
	}
	if why != "a 2/2, d unreachable, e drained" {
		t.Errorf("why = %q", why)
	}
}

func TestMembers(t *testing.T) {
	all := map[string]*state.Host{"a": {Name: "a", Labels: []string{"gpu"}}, "b": {Name: "b"}}
	if m, err := Members(all, "label:gpu"); err != nil || len(m) != 1 || m[0].Name != "a" {
		t.Errorf("label:gpu = %v, %v", m, err)
	}
	if m, err := Members(all, "any"); err != nil || len(m) != 2 {
		t.Errorf("any = %v, %v", m, err)
	}
	for _, bad := range []string{"label:none", "label:", "b"} {
		if _, err := Members(all, bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if !IsPool("any") || !IsPool("label:x") || IsPool("box") || IsPool("") {
		t.Error("IsPool")
	}
}
