package door

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runner-cli/runner/runner/fault"
)

func TestReadsStdin(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"msg", "t_1", "-"}, true},
		{[]string{"msg", "--file=-", "t_1"}, true},
		{[]string{"msg", "-f-", "t_1"}, true},
		{[]string{"msg", "-f=-", "t_1"}, true},
		{[]string{"msg", "t_1", "hi"}, false},
		{[]string{"msg", "--", "t_1", "-"}, true},
		{[]string{"msg", "--", "t_1", "--file=-"}, false},
		{nil, false},
	} {
		if got := ReadsStdin(tc.args); got != tc.want {
			t.Errorf("ReadsStdin(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

// TestConfinedFlags: help always passes; a flag not listed (--socket,
// --host) never does; a command the door does not carry takes none.
func TestConfinedFlags(t *testing.T) {
	for _, tc := range []struct {
		cmd, flag string
		want      bool
	}{
		{"msg", "file", true}, {"msg", "help", true}, {"msg", "socket", false},
		{"dispatch", "worktree", true}, {"dispatch", "host", false}, {"dispatch", "notify", false},
		{"gc", "dry-run", false}, {"gc", "help", true},
	} {
		if got := ConfinedFlag(tc.cmd, tc.flag); got != tc.want {
			t.Errorf("ConfinedFlag(%s, --%s) = %v, want %v", tc.cmd, tc.flag, got, tc.want)
		}
	}
	for _, name := range ConfinedCommands() {
		if !Carried([]string{name}) {
			t.Errorf("ConfinedFlags lists %s, which the door does not carry", name)
		}
	}
}

// fakeDoor serves a door on a socket that answers each request with h,
// and gives its path.
func fakeDoor(t *testing.T, h Handler) string {
	dir, err := os.MkdirTemp("/tmp", "rdoorc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, SocketName)
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go Serve(ctx, ln, 2, h)
	return path
}

// TestForward: the arguments, the caller's folder and (only when an
// argument reads it) standard input reach runner outside; its answer
// comes back as it is.
func TestForward(t *testing.T) {
	var got []Request
	path := fakeDoor(t, func(_ context.Context, req Request) Response {
		got = append(got, req)
		return Response{Stdout: []byte("out:" + string(req.Stdin)), Stderr: []byte("err"), Code: 3}
	})
	ctx := context.Background()
	resp, err := Forward(ctx, path, []string{"msg", "t_1", "-"}, strings.NewReader("hello"), "/w")
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Stdout) != "out:hello" || string(resp.Stderr) != "err" || resp.Code != 3 || resp.Err() != nil {
		t.Errorf("answer %+v", resp)
	}
	if _, err := Forward(ctx, path, []string{"status", "t_1"}, strings.NewReader("unread"), "/w"); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Cwd != "/w" || strings.Join(got[0].Args, " ") != "msg t_1 -" || got[1].Stdin != nil {
		t.Errorf("requests %+v", got)
	}
}

// TestForwardRefusesLargeStdin: standard input over the door's bound is
// a usage error, and nothing is sent.
func TestForwardRefusesLargeStdin(t *testing.T) {
	sent := false
	path := fakeDoor(t, func(context.Context, Request) Response { sent = true; return Response{} })
	big := strings.NewReader(strings.Repeat("x", MaxMessage/2+1))
	_, err := Forward(context.Background(), path, []string{"msg", "t_1", "-"}, big, "")
	if !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "too much for runner's door") {
		t.Errorf("err = %v, want a usage error", err)
	}
	if sent {
		t.Error("a request was sent")
	}
}

// TestForwardNoDoor: a door nobody serves says which and why.
func TestForwardNoDoor(t *testing.T) {
	_, err := Forward(context.Background(), filepath.Join(t.TempDir(), "none.sock"), []string{"ps"}, nil, "")
	if err == nil || !strings.Contains(err.Error(), "runner serves it while the task's supervisor runs") {
		t.Errorf("err = %v", err)
	}
}

// TestReadConfinedFile: a regular file inside the task's folder is read,
// by a relative name from the caller's folder too; one outside, a link,
// or no folder at all is a usage error.
func TestReadConfinedFile(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(sub, "in.md"), []byte("inside"), 0o600)
	outside := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(outside, []byte("secret"), 0o600)
	os.Symlink(outside, filepath.Join(dir, "link"))

	if s, err := ReadConfinedFile(dir, sub, "in.md"); err != nil || s != "inside" {
		t.Errorf("relative: %q, %v", s, err)
	}
	if s, err := ReadConfinedFile(dir, "", filepath.Join(sub, "in.md")); err != nil || s != "inside" {
		t.Errorf("absolute: %q, %v", s, err)
	}
	for _, tc := range []struct{ dir, cwd, file string }{
		{dir, "", outside},
		{dir, dir, "link"},
		{dir, sub, "../../secret"},
		{"", "", filepath.Join(sub, "in.md")},
		{"rel", "", "in.md"},
	} {
		s, err := ReadConfinedFile(tc.dir, tc.cwd, tc.file)
		if !errors.Is(err, fault.ErrUsage) {
			t.Errorf("ReadConfinedFile(%q, %q, %q) = %q, %v; want a usage error", tc.dir, tc.cwd, tc.file, s, err)
		}
	}
}
