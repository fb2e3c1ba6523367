package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/cmd/runner/exitcode"
)

// extName is the second program of runner, installed beside it: the
// commands that link big libraries (runner serve, mcp, watch and the push
// sender: cmd/runner/internal/extcmd) run there, so that every other
// command — a hook event, a door call, a supervisor, a script's runner ps
// — starts without them (issue 51).
const extName = "runner-ext"

// extShorts are the one-line helps of runner-ext's commands, for `runner
// --help` (TestExtShortsSame holds them to the commands' own): an array
// the compiler lays out in data, where a map is built in every process's
// init.
var extShorts = [...]struct{ name, short string }{
	{"watch", "A live full-screen view of every task, one key to act on it"},
	{"serve", "Serve runner over HTTP: an API, a live page for a phone, the event stream"},
	{"mcp", "Serve runner's tools to an MCP client on standard input and output"},
	{"push-send", "Deliver the queued pushes (config notify_push), then exit"},
}

// extShort is the one-line help of runner-ext's command name ("": not
// one of them).
func extShort(name string) string {
	for _, e := range extShorts {
		if e.name == name {
			return e.short
		}
	}
	return ""
}

// ext is the build of the command name that runner-ext runs: in runner, a
// command that hands its whole command line to runner-ext (its flags,
// help and errors are runner-ext's, which speaks as runner); in the
// docs' build, the command itself (extReal).
func (a *app) ext(name string) func() *cobra.Command {
	return func() *cobra.Command {
		if extReal != nil {
			return extReal(a, name)
		}
		c := &cobra.Command{
			Use: name, Short: extShort(name), Hidden: name == "push-send",
			DisableFlagParsing: true,
			RunE:               func(c *cobra.Command, _ []string) error { return a.runExt(a.args) },
		}
		c.SetHelpFunc(func(c *cobra.Command, _ []string) {
			if err := a.runExt([]string{name, "--help"}); err != nil {
				a.printError(err, exitcode.Of(err))
			}
		})
		return c
	}
}

// runExt runs runner-ext with args, in place of this process: runner-ext
// gets runner's path as its first argument (the runner its commands run)
// and everything else as it is. It returns only on a failure to start it.
func (a *app) runExt(args []string) error {
	path, err := extPath()
	if err != nil {
		return err
	}
	a.flush()
	if err := syscall.Exec(path, append([]string{selfPath()}, args...), os.Environ()); err != nil {
		return fmt.Errorf("run %s: %w", path, err)
	}
	return nil
}

// extPath is runner-ext beside this runner: in the folder of its
// executable, else in the folder of the path it was started by (a runner
// reached through a symbolic link whose target has no runner-ext beside
// it). Never one found on $PATH: runner-ext must be runner's own build.
func extPath() (string, error) {
	var dirs []string
	if exe, err := os.Executable(); err == nil {
		dirs = append(dirs, filepath.Dir(exe))
	}
	if self := selfPath(); self != "" && !slices.Contains(dirs, filepath.Dir(self)) {
		dirs = append(dirs, filepath.Dir(self))
	}
	missing := &extMissing{}
	for _, dir := range dirs {
		p := filepath.Join(dir, extName)
		fi, err := os.Stat(p)
		if err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s: %w", p, err)
		}
		missing.looked = append(missing.looked, p)
	}
	return "", missing
}

// extMissing is extPath's error when runner-ext is not beside runner.
type extMissing struct{ looked []string }

// extInstall is how to install runner-ext with runner.
const extInstall = "install both programs: go install github.com/runner-cli/runner/cmd/runner/...@latest, or unpack the whole release archive"

func (e *extMissing) Error() string {
	return fmt.Sprintf("%s is not installed beside runner (looked for %s): %s", extName, strings.Join(e.looked, ", "), extInstall)
}
