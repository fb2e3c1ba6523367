package projects

import (
	"strings"
	"testing"

	"github.com/runner-cli/runner/runner/hosts"

	"github.com/runner-cli/runner/state"
)

// TestResolveProjectOnHost: where a dispatch works when hosts are in play:
// host:NAME:/dir, --host with a path or a name, and the mistakes a user
// makes (a relative path there, a project on another host, two hosts).
func TestResolveProjectOnHost(t *testing.T) {
	local := t.TempDir()
	st := state.New()
	st.Projects["api"] = &state.Project{Name: "api", Dir: "/srv/api", Host: "gpu"}
	st.Projects["web"] = &state.Project{Name: "web", Dir: local}
	// The same path here and on a host are two places.
	st.Projects["here"] = &state.Project{Name: "here", Dir: "/srv/api"}
	for _, c := range []struct {
		arg, host string
		want      Place
		err       string
	}{
		{arg: "api", want: Place{Project: "api", Dir: "/srv/api", Host: "gpu"}},
		{arg: "host:gpu:/srv/api", want: Place{Project: "api", Dir: "/srv/api", Host: "gpu"}},
		{arg: "host:gpu:/srv/api/../api/", want: Place{Project: "api", Dir: "/srv/api", Host: "gpu"}},
		{arg: "/srv/api", host: "gpu", want: Place{Project: "api", Dir: "/srv/api", Host: "gpu"}},
		{arg: "/srv/other", host: "gpu", want: Place{Dir: "/srv/other", Host: "gpu"}},
		{arg: "api", host: "gpu", want: Place{Project: "api", Dir: "/srv/api", Host: "gpu"}},
		{arg: "/srv/api", host: "box", want: Place{Dir: "/srv/api", Host: "box"}},
		{arg: "web", want: Place{Project: "web", Dir: local}},
		{arg: local, want: Place{Project: "web", Dir: local}},
		{arg: "host:gpu:/srv/api", host: "box", err: "is on host gpu, not on --host box"},
		{arg: "srv/api", host: "gpu", err: "give an absolute path"},
		{arg: "web", host: "gpu", err: "is at " + local + ", not on host gpu"},
		{arg: "api", host: "box", err: "is at host:gpu:/srv/api, not on host box"},
		{arg: "nosuch", host: "gpu", err: "not registered"},
	} {
		got, err := Resolve(st, c.arg, c.host)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ResolveProject(%q, host %q) = %+v, %v; want an error with %q", c.arg, c.host, got, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("ResolveProject(%q, host %q) = %+v, %v; want %+v", c.arg, c.host, got, err, c.want)
		}
	}
	// A local path that is a host project's directory is not that project.
	if name := registeredName(st, "/srv/api"); name != "here" {
		t.Errorf("registeredName(/srv/api) = %q, want the local project", name)
	}
}

// TestHostPath splits project locations.
func TestHostPath(t *testing.T) {
	for _, c := range []struct{ in, host, dir string }{
		{"host:gpu:/srv/api", "gpu", "/srv/api"},
		{"host:gpu:", "gpu", ""},
		{"/srv/api", "", "/srv/api"},
		{"host:nocolon", "", "host:nocolon"},
		{"./host:x:y", "", "./host:x:y"},
	} {
		h, d, ok := hosts.Path(c.in)
		if h != c.host || d != c.dir || ok != (c.host != "") {
			t.Errorf("hosts.Path(%q) = %q, %q, %v", c.in, h, d, ok)
		}
	}
	if got := hosts.Location(state.Project{Name: "api", Dir: "/srv/api", Host: "gpu"}); got != "host:gpu:/srv/api" {
		t.Errorf("ProjectLocation = %q", got)
	}
}
