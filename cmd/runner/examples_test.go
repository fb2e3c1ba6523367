package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/tmuxctl"
)

// examplesNotRun are the commands whose help examples the test cannot run,
// and why. Their examples are still parsed (every line a runner command or
// a comment).
var examplesNotRun = map[string]string{
	"runner attach":     "tmux attach takes over a terminal; the test has none",
	"runner watch":      "a full-screen view: it needs a terminal (exit 2 without one)",
	"runner host":       "its example checks a host and dispatches there over ssh",
	"runner host check": "it reaches the host over ssh",
}

// The ids the examples use stand for things the test makes, fresh for each
// example, when a line first names them (so an example's earlier lines do
// not see them): a task in project api in a given state, a snapshot of
// ~/src/api, or two panes at a bash prompt (%3 and %4, made together in
// session scratch, so that one can be killed and then the session).
var exampleTasks = map[string]struct {
	what string // for failure messages
	args []string
	code int // dispatch's exit code
}{
	"t_abc123": {"a done task that wrote a file", nil, 0},
	"t_def456": {"a task busy for 30s", []string{"--detach"}, 0},
	"t_stu901": {"a second task busy for 30s", []string{"--detach"}, 0},
	"t_ghi789": {"a task whose agent crashed (exited)", nil, 1},
	"t_jkl012": {"a task stopped on a question, its supervisor gone", nil, 4},
	"t_mno345": {"a done task that wrote a file in its own worktree", []string{"--worktree"}, 0},
	"t_pqr678": {"a done task that dispatched a child task", nil, 0},
	"t_vwx234": {"a second done task that wrote a file", nil, 0},
}

// exampleTaskText is the sim's prompt (runner/agentsim) for each task
// placeholder; n makes the written file unique, so merges never conflict.
func exampleTaskText(id string, n int) string {
	switch id {
	case "t_def456", "t_stu901":
		return "sleep 30s"
	case "t_ghi789":
		return "crash"
	case "t_jkl012":
		return "ask Proceed with the migration?"
	case "t_pqr678":
		return `run runner dispatch . "add tests for the parser"`
	}
	return fmt.Sprintf("write notes/example-%d.md a note\nsay Added notes/example-%d.md.", n, n)
}

var (
	examplePlaceholder = regexp.MustCompile(`\b[tsg]_[a-z0-9]{6,8}\b|%\d+\b`)
	exampleAssign      = regexp.MustCompile(`^([A-Za-z_]\w*)=\$\((runner .*)\)(?: \|\| exit)?$`)
	exampleExits       = regexp.MustCompile(`\bexits (\d+)\b`)
)

// TestHelpExamples runs the Example of every visible command, line by line,
// as a user would type it (sh -u -c), with the real binary on the sim agent:
// lines are runner commands (or NAME=$(runner …), whose output later lines
// use as "$NAME") and comments. A line must exit 0, or the code its comment
// gives ("# exits 1: …"); a line whose comment says Ctrl-C is interrupted
// once it has printed something and must exit 130. Examples run in the
// command tree's order (a parent before its children, by name) in one
// environment, and see what earlier ones left (project rm web removes the
// web that project add registered; host rm the host that host add did).
func TestHelpExamples(t *testing.T) {
	t.Parallel() // alongside the scripts: it waits more than it computes
	e := newExampleEnv(t, "api")
	a, flush := newApp(strings.NewReader(""), io.Discard, io.Discard, func(string) string { return "" })
	defer flush()
	var cmds []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		cmds = append(cmds, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(a.newRootCmd())
	seen := map[string]bool{}
	for _, c := range cmds {
		path := c.CommandPath()
		seen[path] = true
		t.Run(strings.ReplaceAll(path, " ", "_"), func(t *testing.T) {
			lines := parseExample(t, c.Example)
			if len(lines) == 0 {
				t.Fatalf("%s has no example: give it an Example of one to four lines", path)
			}
			if why, ok := examplesNotRun[path]; ok {
				for _, l := range lines {
					if _, err := checkRunnerCommand(shellWords(l.command)); err != nil {
						t.Errorf("%s: %v", l.text, err)
					}
				}
				t.Skipf("not run: %s (its lines are checked against the command tree)", why)
			}
			e.runExample(t, lines)
		})
	}
	for path := range examplesNotRun {
		if !seen[path] {
			t.Errorf("examplesNotRun names %q, which is no visible command", path)
		}
	}
}

// exampleLine is one command line of an Example (or of a block in the
// docs, which may also change directory or set a variable).
type exampleLine struct {
	text      string // as written, the comment included
	command   string // the command line, run with sh
	assign    string // NAME of NAME=$(runner …)
	code      int    // the exit code wanted
	interrupt bool   // runs until Ctrl-C
	inPane    bool   // runs as from inside a task's pane
	cd        string // cd DIR: later lines run in DIR
	export    string // export NAME=VALUE: NAME=VALUE for later lines
	notRun    string // why the line is not run (it is still checked)
}

func parseExample(t *testing.T, example string) []exampleLine {
	t.Helper()
	var out []exampleLine
	for _, raw := range strings.Split(example, "\n") {
		text := strings.TrimSpace(raw)
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		l := parseExampleLine(text)
		if !strings.HasPrefix(l.command, "runner ") {
			t.Errorf("example line %q: neither a runner command, NAME=$(runner …), nor a # comment", text)
			continue
		}
		out = append(out, l)
	}
	return out
}

// parseExampleLine takes a line's comment off and reads what it asks for:
// the exit code ("# exits 1: …"), an interrupt ("Ctrl-C"), a task's pane to
// run in ("inside a task's pane"); NAME=$(runner …) (with or without
// "|| exit" after it) is taken apart.
func parseExampleLine(text string) exampleLine {
	l := exampleLine{text: text, command: text}
	comment := ""
	if i := strings.Index(text, " #"); i >= 0 {
		l.command, comment = strings.TrimSpace(text[:i]), text[i:]
	}
	if m := exampleAssign.FindStringSubmatch(l.command); m != nil {
		l.assign, l.command = m[1], m[2]
	}
	if m := exampleExits.FindStringSubmatch(comment); m != nil {
		l.code, _ = strconv.Atoi(m[1])
	}
	if strings.Contains(comment, "Ctrl-C") {
		l.interrupt, l.code = true, 130
	}
	l.inPane = strings.Contains(comment, "inside a task's pane")
	return l
}

// exampleEnv is the environment every example runs in: a private tmux
// server, HOME, config and state in a temp dir, the sim the default agent,
// git repositories ~/src/api (the working directory), ~/src/web and
// ~/src/shop, of which the names given to newExampleEnv are registered.
type exampleEnv struct {
	env  []string
	home string
	dir  string // ~/src/api
	sock string // the private tmux server
	n    int    // files written by task placeholders
}

func newExampleEnv(t *testing.T, projects ...string) *exampleEnv {
	for _, prog := range []string{"tmux", "git"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("%s not installed", prog)
		}
	}
	// TestMain (testscript.Main) put this test binary on PATH as runner.
	if _, err := exec.LookPath("runner"); err != nil {
		t.Fatalf("runner not on PATH: %v", err)
	}
	root, err := os.MkdirTemp("/tmp", "rex") // a short tmux socket path
	if err != nil {
		t.Fatal(err)
	}
	sock, home := filepath.Join(root, "s"), filepath.Join(root, "home")
	e := &exampleEnv{home: home, dir: filepath.Join(home, "src", "api"), sock: sock}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tmuxctl.New(sock).KillServer(ctx)
		// Supervisors may write their last record as their panes go.
		for range 3 {
			if os.RemoveAll(root) == nil {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
	set := map[string]string{
		"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"XDG_STATE_HOME": filepath.Join(home, ".local/state"), "XDG_CACHE_HOME": filepath.Join(home, ".cache"),
		"RUNNER_STATE_DIR": filepath.Join(home, ".local/state/runner"), "RUNNER_TMUX_SOCKET": sock,
		"TERM": "xterm-256color", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
		"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
		"GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
	}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); set[k] == "" {
			e.env = append(e.env, kv)
		}
	}
	for k, v := range set {
		e.env = append(e.env, k+"="+v)
	}
	e.writeFiles(t)
	e.gitRepo(t, e.dir)
	e.gitRepo(t, filepath.Join(home, "src", "web"))
	e.gitRepo(t, filepath.Join(home, "src", "shop"))
	for _, name := range projects {
		e.runner(t, "project", "add", name, filepath.Join(home, "src", name))
	}
	return e
}

// writeFiles writes the config (sim the default agent, no awareness block
// in the prompts), an agent file, and the files the examples name.
func (e *exampleEnv) writeFiles(t *testing.T) {
	files := map[string]string{
		".config/runner/config.json":        `{"default_agent": "sim", "awareness": {"mode": "off"}}`,
		".config/runner/agents/claude.toml": "# wait longer at the prompt before a turn counts as over\nready_hold = \"3s\"\n",
		"src/api/README.md":                 "# api\n",
		"src/api/main.go":                   "package main\n\nfunc main() {}\n",
		"src/api/test.sh":                   "#!/bin/sh\necho 'ok: 12 tests passed'\n",
		"src/api/Makefile":                  "test:\n\t./test.sh\n",
		"src/api/task.md":                   "Add a /health endpoint that returns 200 and the version.\n",
		"src/api/followup.md":               "Now document it in the README.\n",
		"src/api/question.md":               "Which file holds the retry logic?\n",
		"src/api/claude-screen.txt": "╭──────────────────────────────╮\n│ ✻ Welcome to Claude Code!    │\n" +
			"╰──────────────────────────────╯\n\n❯\u00a0\n  ? for shortcuts\n",
		"src/web/README.md":  "# web\n",
		"src/shop/README.md": "# shop\n",
	}
	for name, text := range files {
		p := filepath.Join(e.home, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
	}
}

func (e *exampleEnv) gitRepo(t *testing.T, dir string) {
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"commit", "-q", "-m", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, e.env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
		}
	}
}

// runner runs the binary directly (the test's own steps, not an example)
// and fails the test unless it exits 0.
func (e *exampleEnv) runner(t *testing.T, args ...string) string {
	t.Helper()
	return e.runnerWith(t, nil, args...)
}

// runnerWith is runner with vars added to the environment.
func (e *exampleEnv) runnerWith(t *testing.T, vars map[string]string, args ...string) string {
	t.Helper()
	code, out, errOut := e.exec(t, vars, "runner", args...)
	if code != 0 {
		t.Fatalf("runner %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// exampleBound ends an example's command that hangs: a guard, not a
// timing (gc ran past 30 s at a load of 100 on 2 cores).
const exampleBound = 2 * time.Minute

// exec runs a program in ~/src/api with the environment (and vars) and
// returns its exit code and output. It gives up after exampleBound.
func (e *exampleEnv) exec(t *testing.T, vars map[string]string, prog string, args ...string) (int, string, string) {
	ctx, cancel := context.WithTimeout(context.Background(), exampleBound)
	defer cancel()
	cmd := e.command(ctx, e.dir, vars, prog, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	return exitStatus(t, cmd.Run()), out.String(), errOut.String()
}

func (e *exampleEnv) command(ctx context.Context, dir string, vars map[string]string, prog string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir, cmd.Env, cmd.WaitDelay = dir, slices.Clone(e.env), 5*time.Second
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

func exitStatus(t *testing.T, err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return ee.ExitCode()
	}
	t.Errorf("%v", err)
	return -1
}

// runExample runs the lines in order with fresh placeholders, then ends
// the tasks and panes it made for them. It returns how many lines it ran.
// A cd or export line changes the directory or the variables of the lines
// after it; a line "inside a task's pane" runs with RUNNER_TASK_ID of
// paneTask; "tmux -L runner" (runner's own server) is the private server.
func (e *exampleEnv) runExample(t *testing.T, lines []exampleLine) int {
	fx := &exampleFixtures{e: e, t: t, made: map[string]string{}}
	defer fx.cleanup()
	vars, dir, ran := map[string]string{}, e.dir, 0
	for _, l := range lines {
		switch {
		case l.notRun != "":
			t.Logf("not run: %s (%s)", l.text, l.notRun)
			continue
		case l.cd != "":
			dir = e.path(dir, l.cd)
			continue
		case l.export != "":
			k, v, _ := strings.Cut(l.export, "=")
			vars[k] = v
			continue
		}
		command := examplePlaceholder.ReplaceAllStringFunc(l.command, fx.get)
		command = strings.ReplaceAll(command, "tmux -L runner ", "tmux -S "+e.sock+" ")
		lineVars := vars
		if l.inPane {
			lineVars = maps.Clone(vars)
			lineVars["RUNNER_TASK_ID"] = fx.paneTask()
		}
		ran++
		code, out, errOut := e.shell(t, dir, lineVars, command, l.interrupt)
		t.Logf("$ %s\n%s(exit %d)", command, firstLines(out, 8), code)
		if code != l.code {
			t.Fatalf("%s\n(run as: %s)\nexit %d, want %d\nstdout:\n%s\nstderr:\n%s", l.text, command, code, l.code, out, errOut)
		}
		if l.assign != "" {
			vars[l.assign] = strings.TrimSpace(out)
		}
	}
	return ran
}

// path is dir after cd to p (~ is HOME).
func (e *exampleEnv) path(dir, p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		p = e.home + p[1:]
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

// shell runs one command line in dir with sh -u (a variable no line set
// is an error), as typed; a simple command is exec'd. With interrupt, it
// sends SIGINT once the command printed something (or after 5s).
func (e *exampleEnv) shell(t *testing.T, dir string, vars map[string]string, command string, interrupt bool) (int, string, string) {
	if !strings.ContainsAny(command, ";|&<>") {
		command = "exec " + command
	}
	ctx, cancel := context.WithTimeout(context.Background(), exampleBound)
	defer cancel()
	cmd := e.command(ctx, dir, vars, "sh", "-uc", command)
	if !interrupt {
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		return exitStatus(t, cmd.Run()), out.String(), errOut.String()
	}
	var out, errOut lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := clock.Now().Add(5 * time.Second)
	for out.Len() == 0 && clock.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	return exitStatus(t, cmd.Wait()), out.String(), errOut.String()
}

// firstLines is s cut after n lines, for the test's log.
func firstLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) <= n+1 {
		return s
	}
	return strings.Join(lines[:n], "") + fmt.Sprintf("… %d more lines\n", len(lines)-n-1)
}

// lockedBuffer is a bytes.Buffer a running command writes while the test
// reads its length.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// exampleFixtures are the placeholders of one example, made on first use.
type exampleFixtures struct {
	e     *exampleEnv
	t     *testing.T
	made  map[string]string // placeholder → real id
	tasks []string
	panes []string
}

func (fx *exampleFixtures) get(placeholder string) string {
	if id, ok := fx.made[placeholder]; ok {
		return id
	}
	switch {
	case placeholder == "s_abc123":
		var snap struct{ ID string }
		fx.unmarshal(fx.e.runner(fx.t, "snapshot", "take", "--json"), &snap)
		fx.made[placeholder] = snap.ID
	case placeholder == "%3" || placeholder == "%4":
		fx.made["%3"], fx.made["%4"] = fx.pane(), fx.pane()
	case placeholder == "g_abc123":
		fx.made[placeholder] = fx.group()
	default:
		fx.made[placeholder] = fx.task(placeholder)
	}
	return fx.made[placeholder]
}

func (fx *exampleFixtures) task(placeholder string) string {
	spec, ok := exampleTasks[placeholder]
	if !ok {
		fx.t.Fatalf("the example names %s: not an id the test makes (see exampleTasks)", placeholder)
	}
	fx.e.n++
	args := append([]string{"dispatch", "api", "--json"}, spec.args...)
	args = append(args, exampleTaskText(placeholder, fx.e.n))
	code, out, errOut := fx.e.exec(fx.t, nil, "runner", args...)
	var task struct{ ID string }
	if code != spec.code || json.Unmarshal([]byte(out), &task) != nil || task.ID == "" {
		fx.t.Fatalf("making %s (%s): runner %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s",
			placeholder, spec.what, strings.Join(args, " "), code, spec.code, out, errOut)
	}
	fx.tasks = append(fx.tasks, task.ID)
	if slices.Contains(spec.args, "--detach") {
		fx.waitFor(placeholder, func() bool {
			var st struct{ Status string }
			return json.Unmarshal([]byte(fx.e.runner(fx.t, "status", "--json", task.ID)), &st) == nil && st.Status == "running"
		})
	}
	return task.ID
}

// group makes g_abc123: a group of two sim candidates in project api,
// each writing a file of its own, checked (true) and voted on.
func (fx *exampleFixtures) group() string {
	fx.e.n++
	text := fmt.Sprintf("write notes/group-%d.md a note\nsay Added notes/group-%d.md.", fx.e.n, fx.e.n)
	args := []string{"dispatch", "api", "--json", "--agents", "sim,sim", "--check", "true", "--vote", text}
	code, out, errOut := fx.e.exec(fx.t, nil, "runner", args...)
	var c struct {
		Group struct {
			ID    string
			Tasks []string
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &c) != nil || c.Group.ID == "" {
		fx.t.Fatalf("making g_abc123 (a group of two): runner %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
	}
	fx.tasks = append(fx.tasks, c.Group.Tasks...)
	return c.Group.ID
}

// paneTask is the task a line "inside a task's pane" runs as: the pane's
// environment names it (RUNNER_TASK_ID), as runner's panes do. It is a
// child, busy for 30s, of a done task (t_abc123), with a sibling busy for
// 30s, both dispatched with the parent's RUNNER_TASK_ID, as from its pane.
func (fx *exampleFixtures) paneTask() string {
	if id, ok := fx.made["pane task"]; ok {
		return id
	}
	parent := fx.get("t_abc123")
	var ids []string
	for range 2 {
		out := fx.e.runnerWith(fx.t, map[string]string{"RUNNER_TASK_ID": parent}, "dispatch", "api", "--detach", "--json", "sleep 30s")
		var task struct{ ID, Parent string }
		fx.unmarshal(out, &task)
		if task.Parent != parent {
			fx.t.Fatalf("the child of %s has parent %q:\n%s", parent, task.Parent, out)
		}
		fx.tasks, ids = append(fx.tasks, task.ID), append(ids, task.ID)
	}
	for _, id := range ids {
		fx.waitFor("child "+id, func() bool {
			var st struct{ Status string }
			return json.Unmarshal([]byte(fx.e.runner(fx.t, "status", "--json", id)), &st) == nil && st.Status == "running"
		})
	}
	fx.made["pane task"] = ids[0]
	return ids[0]
}

// pane launches bash in session scratch and waits for its prompt.
func (fx *exampleFixtures) pane() string {
	id := strings.TrimSpace(fx.e.runner(fx.t, "tmux", "launch", "--name", "scratch", "--env", "PS1=$ ", "--",
		"bash", "--norc", "--noprofile"))
	fx.panes = append(fx.panes, id)
	fx.waitFor("pane "+id, func() bool {
		return strings.HasSuffix(strings.TrimSpace(fx.e.runner(fx.t, "tmux", "capture", "--pane", id)), "$")
	})
	return id
}

func (fx *exampleFixtures) waitFor(what string, ok func() bool) {
	deadline := clock.Now().Add(20 * time.Second)
	for !ok() {
		if clock.Now().After(deadline) {
			fx.t.Fatalf("%s: not ready after 20s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (fx *exampleFixtures) unmarshal(out string, v any) {
	if err := json.Unmarshal([]byte(out), v); err != nil {
		fx.t.Fatalf("%v:\n%s", err, out)
	}
}

// cleanup ends the tasks (their agents and panes) and the panes it made,
// whatever the example did with them.
func (fx *exampleFixtures) cleanup() {
	for _, id := range fx.tasks {
		fx.e.exec(fx.t, nil, "runner", "cancel", "--kill", id)
	}
	for _, id := range fx.panes {
		fx.e.exec(fx.t, nil, "runner", "tmux", "kill", "--pane", id)
	}
}
