package agentscmd

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/runner-cli/runner/cmd/runner/internal/cmdkit"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/tmuxctl"
)

// simAsk is a screen of the sim agent asking a question.
const simAsk = "../../../../runner/profile/testdata/screens/sim__needs_input__1.txt"

// fake is a factory whose config is read from a config directory of the
// test's own (agent files put there by files), with only that directory
// in its environment.
type fake struct {
	f      *cmdkit.Factory
	b      *cmdkit.Buffers
	env    map[string]string
	agents string // the agents folder of the config directory
}

func newFake(t *testing.T, stdin string, files map[string]string) *fake {
	t.Helper()
	dir := t.TempDir()
	x := &fake{env: map[string]string{"XDG_CONFIG_HOME": dir, "HOME": dir}, agents: filepath.Join(dir, "runner", "agents")}
	if err := os.MkdirAll(x.agents, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(x.agents, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	x.f, x.b = cmdkit.Fake(stdin, x.env)
	x.f.Config = func() (*config.Config, error) {
		cfg, _, err := config.Load(x.f.Getenv)
		return cfg, err
	}
	return x
}

// run runs `runner agents ARGS` over the fake and returns its error.
func (x *fake) run(t *testing.T, args ...string) error {
	t.Helper()
	return x.b.Run(t.Context(), NewCmd(x.f), args...)
}

// tmuxServer is a tmux server on a socket of its own, ended with the
// test.
func tmuxServer(t *testing.T) *tmuxctl.Client {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "rac")
	if err != nil {
		t.Fatal(err)
	}
	tc := tmuxctl.New(filepath.Join(dir, "s"), tmuxctl.WithConfig("/dev/null"))
	t.Cleanup(func() {
		_ = tc.KillServer(context.Background())
		os.RemoveAll(dir)
	})
	return tc
}
