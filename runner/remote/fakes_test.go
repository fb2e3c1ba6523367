package remote

import (
	"context"
	"fmt"
	"strings"

	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// fakeConn is a host that answers each command with the first answer
// whose key its argv (joined by spaces) contains, and records them.
type fakeConn struct {
	host    *state.Host
	socket  string
	answers []answer
	ran     [][]string
}

type answer struct {
	key, out string
	err      error
}

var _ SandboxConn = (*fakeConn)(nil)

func (f *fakeConn) Host() *state.Host   { return f.host }
func (f *fakeConn) TC() *tmuxctl.Client { return tmuxctl.New(f.socket) }

func (f *fakeConn) Run(_ context.Context, argv ...string) (string, error) {
	f.ran = append(f.ran, argv)
	line := strings.Join(argv, " ")
	for _, a := range f.answers {
		if strings.Contains(line, a.key) {
			return a.out, a.err
		}
	}
	return "", fmt.Errorf("host %s: no answer for %q", f.host.Name, line)
}

// box is a host with runner's binary at /opt/runner there.
func box(answers ...answer) *fakeConn {
	return &fakeConn{host: &state.Host{Name: "box", Destination: "u@box", Runner: "/opt/runner"}, socket: "runner", answers: answers}
}
