package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runner-cli/runner/cmd/runner/internal/extcmd"
	"github.com/runner-cli/runner/runner/door"
)

// heavyPackages are what runner hands to runner-ext so that no other
// command starts with them (issue 51).
var heavyPackages = []string{"net/http", "crypto/tls", "github.com/modelcontextprotocol/go-sdk/mcp",
	"charm.land/bubbletea/v2", "charm.land/lipgloss/v2", "encoding/gob", "github.com/google/jsonschema-go/jsonschema"}

// TestRunnerLinksNoHeavyPackage: runner's own program links none of the
// libraries of serve, mcp, watch and the push sender; runner-ext does.
func TestRunnerLinksNoHeavyPackage(t *testing.T) {
	t.Parallel()
	deps := func(pkg string) map[string]bool {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		m := map[string]bool{}
		for _, p := range strings.Fields(string(out)) {
			m[p] = true
		}
		return m
	}
	runner, ext := deps("."), deps("./runner-ext")
	for _, p := range heavyPackages {
		if runner[p] {
			t.Errorf("runner links %s: what needs it belongs in runner-ext (cmd/runner/internal/extcmd)", p)
		}
		if !ext[p] && p != "encoding/gob" && p != "github.com/google/jsonschema-go/jsonschema" {
			t.Errorf("runner-ext does not link %s: is the list stale?", p)
		}
	}
}

// buildPair builds runner and runner-ext as the release does into one
// folder and returns runner's path.
func buildPair(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bin")
	for _, pkg := range []string{".", "./runner-ext"} {
		name := "runner"
		if pkg != "." {
			name = extName
		}
		if out, err := goBuildStatic(filepath.Join(dir, name), pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	return filepath.Join(dir, "runner")
}

// TestExtProgram runs the two programs as built: runner runs runner-ext
// for its commands with the whole command line (--socket included), as
// runner; help goes there too; a runner without runner-ext beside it says
// so and how to install it; a runner reached through a link finds it
// beside the link's target; a sandboxed caller is refused before anything
// runs.
func TestExtProgram(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds runner and runner-ext")
	}
	bin := buildPair(t)
	env := append(os.Environ(), "RUNNER_STATE_DIR="+t.TempDir(), "RUNNER_CONFIG_DIR="+t.TempDir(), "RUNNER_TMUX_SOCKET=runner-ext-test")
	run := func(bin string, env []string, args ...string) (int, string, string) {
		for tries := 0; ; tries++ {
			cmd := exec.Command(bin, args...)
			cmd.Env = env
			var out, errOut strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &errOut
			err := cmd.Run()
			// A binary this test just wrote (runner alone) is "text file
			// busy" while a process another test forks meanwhile still
			// holds the copy's descriptor, until it execs (go.dev/issue/22315).
			if errors.Is(err, syscall.ETXTBSY) && tries < 100 {
				time.Sleep(20 * time.Millisecond)
				continue
			}
			return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
		}
	}
	if code, _, errOut := run(bin, env, "watch"); code != 2 || !strings.Contains(errOut, "runner: watch needs a terminal") {
		t.Errorf("runner watch without a terminal: exit %d, %q", code, errOut)
	}
	code, out, _ := run(bin, env, "--socket", "s1", "serve", "--token")
	if code != 0 || !strings.HasPrefix(out, "read ") {
		t.Errorf("runner --socket s1 serve --token: exit %d, %q", code, out)
	}
	if code, _, errOut := run(bin, env, "push-send"); code != 0 {
		t.Errorf("runner push-send with nothing queued: exit %d, %q", code, errOut)
	}
	if _, out, _ := run(bin, env, "doctor", "--no-version"); !strings.Contains(out, "ok    runner-ext") {
		t.Errorf("runner doctor does not find runner-ext beside runner:\n%s", out)
	}
	for _, args := range [][]string{{"watch", "--help"}, {"help", "watch"}} {
		if code, out, _ := run(bin, env, args...); code != 0 || !strings.Contains(out, "--popup") || !strings.Contains(out, "runner watch") {
			t.Errorf("runner %v: exit %d, %q", args, code, out)
		}
	}
	// The shell's completion of runner-ext's flags, asked of runner.
	if code, out, _ := run(bin, env, "__complete", "watch", "--pop"); code != 0 || !strings.Contains(out, "--popup") {
		t.Errorf("runner __complete watch --pop: exit %d, %q", code, out)
	}
	if code, out, _ := run(bin, env, "--help"); code != 0 || !strings.Contains(out, "watch ") || !strings.Contains(out, extShort("serve")) {
		t.Errorf("runner --help does not list runner-ext's commands: %d %q", code, out)
	}
	for _, args := range [][]string{{"serve", "--token"}, {"help", "serve"}, {"__complete", "serve", "--l"}} {
		if code, out, errOut := run(bin, append(env, door.EnvConfined+"=1"), args...); code != 2 || out != "" || !strings.Contains(errOut, "not open to a sandboxed task") {
			t.Errorf("runner %v through a door: exit %d, %q %q", args, code, out, errOut)
		}
	}
	// MCP over runner's standard input and output, through the exec.
	cmd := exec.Command(bin, "mcp")
	cmd.Env = env
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_, _ = stdin.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"))
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	stdin.Close()
	if err := cmd.Wait(); err != nil || !strings.Contains(line, `"serverInfo"`) {
		t.Errorf("runner mcp initialize: %v %q", err, line)
	}
	// A link to runner in another folder: runner-ext beside the target.
	link := filepath.Join(t.TempDir(), "runner")
	if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := run(link, env, "serve", "--token"); code != 0 || !strings.HasPrefix(out, "read ") {
		t.Errorf("a linked runner: exit %d, %q", code, out)
	}
	// runner alone.
	alone := filepath.Join(t.TempDir(), "runner")
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := run(alone, env, "watch"); code != 1 || !strings.Contains(errOut, "runner-ext is not installed beside runner") ||
		!strings.Contains(errOut, "go install github.com/runner-cli/runner/cmd/runner/...@latest") {
		t.Errorf("runner without runner-ext: exit %d, %q", code, errOut)
	}
	if _, out, _ := run(alone, env, "doctor", "--no-version"); !strings.Contains(out, "warn  runner-ext") || !strings.Contains(out, "go install") {
		t.Errorf("runner doctor without runner-ext:\n%s", out)
	}
	if code, out, _ := run(alone, env, "version"); code != 0 || !strings.HasPrefix(out, "runner ") {
		t.Errorf("runner version alone: exit %d, %q", code, out)
	}
}

// TestExtShortsSame: runner lists each command runner-ext runs with the
// command's own one-line help, and lists every one of them.
func TestExtShortsSame(t *testing.T) {
	a, _ := newApp(strings.NewReader(""), io.Discard, io.Discard, func(string) string { return "" })
	c := extcmd.New(a.factory(), "v0")
	if extName != extcmd.Program {
		t.Errorf("runner looks for %q, runner-ext is %q", extName, extcmd.Program)
	}
	if len(extShorts) != len(extcmd.Names) {
		t.Errorf("extShorts has %d commands, runner-ext %d", len(extShorts), len(extcmd.Names))
	}
	root := a.newRootCmd()
	for _, name := range extcmd.Names {
		if got, want := extShort(name), c.Build(name).Short; got != want {
			t.Errorf("runner %s: runner lists %q, the command says %q", name, got, want)
		}
		if sub, _, err := root.Find([]string{name}); err != nil || sub.Name() != name {
			t.Errorf("runner's tree has no %s: %v", name, err)
		}
	}
}

// TestExtRunsItsRunner: runner-ext's commands run the runner that started
// it, whatever its name (an install as runner-1.2), not runner-ext: a
// request to serve's API runs `runner ps` and answers with its tasks.
func TestExtRunsItsRunner(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds runner and runner-ext")
	}
	bin := buildPair(t)
	renamed := filepath.Join(filepath.Dir(bin), "runner-1.2")
	if err := os.Rename(bin, renamed); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	env := append(os.Environ(), "RUNNER_STATE_DIR="+filepath.Join(dir, "state"), "RUNNER_CONFIG_DIR="+filepath.Join(dir, "cfg"),
		"RUNNER_TMUX_SOCKET="+filepath.Join(dir, "no.sock"))
	tok := exec.Command(renamed, "serve", "--token")
	tok.Env = env
	out, err := tok.Output()
	if err != nil {
		t.Fatalf("serve --token: %v", err)
	}
	read := strings.Fields(strings.SplitN(string(out), "\n", 2)[0])[1]
	sock := filepath.Join(dir, "s.sock")
	srv := exec.Command(renamed, "serve", "--listen", "unix:"+sock)
	srv.Env = env
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Process.Signal(os.Interrupt); _ = srv.Wait() }()
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	var status int
	var body []byte
	for range 300 { // until it listens
		req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://runner/api/v1/tasks", nil)
		req.Header.Set("Authorization", "Bearer "+read)
		resp, err := client.Do(req)
		if err == nil {
			status = resp.StatusCode
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if status != http.StatusOK || !strings.HasPrefix(strings.TrimSpace(string(body)), "[") {
		t.Errorf("GET /api/v1/tasks through runner-1.2's serve: %d %s", status, body)
	}
}
