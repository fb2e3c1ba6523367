package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/runner-cli/runner/runner"
)

// selfPath is the absolute path of this runner binary, as invoked (a
// symlink named runner is kept, so test harnesses that run the test binary
// under that name work too).
func selfPath() string {
	if a0 := os.Args[0]; filepath.Base(a0) == "runner" {
		if strings.Contains(a0, "/") {
			if abs, err := filepath.Abs(a0); err == nil {
				return abs
			}
		} else if p, err := exec.LookPath(a0); err == nil {
			if abs, err := filepath.Abs(p); err == nil {
				return abs
			}
		}
	}
	p, err := os.Executable()
	if err != nil {
		return ""
	}
	return p
}

// runnerEnv loads the config and opens the state and the tmux server.
func (a *app) runnerEnv(progress bool) (*runner.Env, *runner.Config, error) {
	cfg, _, err := runner.LoadConfig(a.getenv)
	if err != nil {
		return nil, nil, err
	}
	store, err := runner.OpenStore(a.getenv, cfg)
	if err != nil {
		return nil, nil, err
	}
	profiles, err := cfg.Profiles()
	if err != nil {
		return nil, nil, err
	}
	env := &runner.Env{Store: store, TC: a.tmuxClientFor(cfg),
		Profiles: profiles, Getenv: a.getenv, Environ: os.Environ, Exe: selfPath()}
	if progress {
		env.Progress = a.errOut
	}
	return env, cfg, nil
}
