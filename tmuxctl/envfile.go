// Handing a pane its environment through a file: values never appear on a
// command line (tmux keeps the command line that started its server for
// the server's whole life, and `ps` shows it to every user).

package tmuxctl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/privdir"
	"github.com/runner-cli/runner/internal/transport"
)

// envScript is the pane's first program when it is given an environment
// on another machine, or here without a private directory for the file
// (see envScriptHere): /bin/sh reads the 0600 file named by $1 (lines
// KEY='value', exported), removes it, and execs the command that follows,
// or the user's shell when none does. The script is constant; the file
// name and the command reach it as arguments, never as shell text.
const envScript = `set -a; . "$1" || exit 127; set +a; rm -f -- "$1"; shift; ` +
	`[ "$#" -gt 0 ] || set -- "${SHELL:-/bin/sh}"; exec "$@"`

// envScriptHere is envScript on this machine: the file is emptied with
// the shell's own redirection instead of removed by rm, a process on the
// way to every agent's start (1.4 ms of the sim's 11 here). Its values
// are gone at the same moment; the empty file is removed by a later
// launch (sweepEmptied).
const envScriptHere = `set -a; . "$1" || exit 127; set +a; : > "$1"; shift; ` +
	`[ "$#" -gt 0 ] || set -- "${SHELL:-/bin/sh}"; exec "$@"`

// envArgv0 is the name the script runs under ($0), shown by ps while it
// reads the file.
const envArgv0 = "runner-env"

// EnvFileText renders K=V entries as the file envScript reads: one
// KEY='value' line each, quoted for a POSIX shell. A key that is not a
// shell variable name (letters, digits and '_', not starting with a digit)
// is an error.
func EnvFileText(env []string) (string, error) {
	var b strings.Builder
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !ValidEnvName(k) {
			return "", fmt.Errorf("environment entry %q: want KEY=VALUE with KEY of letters, digits and '_'", clip(kv, 40))
		}
		b.WriteString(k + "=" + transport.Quote(v) + "\n")
	}
	return b.String(), nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// ValidEnvName reports whether k can be handed to a pane: a POSIX shell
// variable name (letters, digits and '_', not starting with a digit).
func ValidEnvName(k string) bool {
	if k == "" || k[0] >= '0' && k[0] <= '9' {
		return false
	}
	for _, r := range k {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// withEnvFile returns the argv that starts argv with env: env written to
// a new 0600 file where the pane's process runs (this machine, or the
// host over the transport), read and removed (here: emptied) by the
// script before it execs
// argv. remove deletes the file, for a launch that failed before the pane
// could read it. With no env, argv is returned as it is.
func (c *Client) withEnvFile(ctx context.Context, env, argv []string) (out []string, remove func(), err error) {
	if len(env) == 0 {
		return argv, func() {}, nil
	}
	text, err := EnvFileText(env)
	if err != nil {
		return nil, nil, err
	}
	var path string
	script := envScript
	if c.tr != nil {
		path, err = c.writeEnvThere(ctx, text)
	} else {
		var private bool
		if path, private, err = writeEnvHere(text); private {
			script = envScriptHere // emptied, and swept from its directory
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("hand the pane its environment: %w", err)
	}
	remove = func() {
		if c.tr != nil {
			_, _, _ = c.hostShell(context.WithoutCancel(ctx), "", `rm -f -- "$1"`, path)
			return
		}
		os.Remove(path)
	}
	return append([]string{"/bin/sh", "-c", script, envArgv0, path}, argv...), remove, nil
}

// writeEnvHere writes text to a new file (O_EXCL, 0600, a random name) in
// this user's private directory (private), else in the temporary
// directory.
func writeEnvHere(text string) (path string, private bool, err error) {
	dir, err := privdir.Dir("env")
	if private = err == nil; private {
		sweepEmptied(dir)
	} else {
		dir = os.TempDir()
	}
	f, err := os.CreateTemp(dir, "env-")
	if err != nil {
		return "", false, err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", false, err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", false, err
	}
	return f.Name(), private, nil
}

// emptiedAge is how old an empty hand-over file must be before a launch
// removes it: one just made (O_EXCL) is empty until its text is written.
const emptiedAge = time.Minute

// sweptMark is the file in the hand-over directory whose time says when
// a launch last swept it: one sweep a minute (emptiedAge) at most,
// whatever the launches, so that a burst of them, each with its file in
// the directory, does not read the whole directory each.
const sweptMark = ".swept"

// sweepEmptied removes the hand-over files in dir that panes have read
// and emptied (envScriptHere), as a launch writes a new one, when no
// launch did for emptiedAge: an empty file holds nothing, and the
// directory stays small. A file with text is never touched: it is a
// launch's in flight.
func sweepEmptied(dir string) {
	mark := filepath.Join(dir, sweptMark)
	if fi, err := os.Lstat(mark); err == nil && fi.Mode().IsRegular() && clock.Since(clock.Outside(fi.ModTime())) < emptiedAge {
		return
	}
	// The mark is made anew, never written through: whatever is there
	// (a link included) is removed, not followed, and O_EXCL makes only
	// a new file; a launch that finds one made meanwhile leaves the sweep
	// to the launch that made it.
	os.Remove(mark)
	f, err := os.OpenFile(mark, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return
	}
	f.Close()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "env-") || !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.Size() == 0 && clock.Since(clock.Outside(fi.ModTime())) > emptiedAge {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// writeEnvThere writes text to a new file on the host: mktemp makes it
// 0600 with a random name, under umask 077, in $TMPDIR or /tmp there.
func (c *Client) writeEnvThere(ctx context.Context, text string) (string, error) {
	out, stderr, err := c.hostShell(ctx, text,
		`umask 077; f=$(mktemp "${TMPDIR:-/tmp}/runner-env.XXXXXXXX") && cat > "$f" && printf '%s' "$f"`)
	if err != nil {
		return "", fmt.Errorf("on %s: %w: %s", c.tr, err, strings.TrimSpace(stderr))
	}
	if !strings.HasPrefix(out, "/") {
		return "", fmt.Errorf("on %s: mktemp printed %q, not a path", c.tr, clip(out, 60))
	}
	return out, nil
}

// hostShell runs the constant shell script on the client's host with
// args as its positional parameters and stdin as its input.
func (c *Client) hostShell(ctx context.Context, stdin, script string, args ...string) (stdout, stderr string, err error) {
	argv := append([]string{"sh", "-c", script, "sh"}, args...)
	if r, ok := c.tr.(transport.Runner); ok {
		o, e, code, err := r.Run(ctx, []byte(stdin), argv...)
		if err == nil && code != 0 {
			err = fmt.Errorf("exit status %d", code)
		}
		return string(o), string(e), err
	}
	cmd := c.tr.Command(ctx, argv...)
	cmd.Stdin = strings.NewReader(stdin)
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	if err != nil && ctx.Err() != nil {
		err = errors.Join(ctx.Err(), err)
	}
	return o.String(), e.String(), err
}
