package transport

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/sshtest"
)

// TestSessionRun runs commands in the session shell through a real sshd:
// hostile argv and binary stdin byte-exact, stdout, stderr and exit status
// kept apart, one shell for them all, and a shell that died (its
// connection dropped) replaced on the next command.
func TestSessionRun(t *testing.T) {
	srv, s := loopSSH(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	argv := append([]string{"sh", "-c", `cd "$1" && shift && printf '%s\0' "$@"`, "sh", dir}, hostile...)
	stdout, stderr, code, err := s.Run(ctx, nil, argv...)
	if err != nil || code != 0 {
		t.Fatalf("hostile argv: code %d, err %v, stderr %q", code, err, stderr)
	}
	checkEcho(t, stdout, dir)

	bin := []byte("bytes\x00\x01\xff\n\r\n" + strings.Repeat("x", 100<<10) + "\nno newline at the end")
	stdout, _, code, err = s.Run(ctx, bin, "cat")
	if err != nil || code != 0 || !bytes.Equal(stdout, bin) {
		t.Fatalf("stdin through cat: code %d, err %v, %d bytes back of %d", code, err, len(stdout), len(bin))
	}
	stdout, stderr, code, err = s.Run(ctx, nil, "sh", "-c", `echo out; echo err >&2; exit 7`)
	if err != nil || code != 7 || string(stdout) != "out\n" || string(stderr) != "err\n" {
		t.Fatalf("exit 7: code %d, err %v, stdout %q, stderr %q", code, err, stdout, stderr)
	}
	// An empty input is no input; a command that reads it sees EOF.
	if stdout, _, code, err = s.Run(ctx, []byte{}, "wc", "-c"); err != nil || code != 0 || strings.TrimSpace(string(stdout)) != "0" {
		t.Fatalf("empty stdin: %q %d %v", stdout, code, err)
	}

	// One shell for all: the parent of each command is the same process.
	pid := func() string {
		out, _, _, err := s.Run(ctx, nil, "sh", "-c", `ps -o ppid= -p $$`)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	first := pid()
	if second := pid(); first != second || first == "" {
		t.Fatalf("two commands ran under shells %s and %s", first, second)
	}
	// The connection drops (the master goes): the next command gets a
	// new shell on a new connection.
	// (not Exit, which would close the shell first: here the connection
	// goes under it)
	if out, err := exec.Command("ssh", append(append([]string{"-o", "ControlPath=" + s.ControlPath(), "-O", "exit"}, s.Args...), s.Destination)...).CombinedOutput(); err != nil {
		t.Fatalf("ssh -O exit: %v: %s", err, out)
	}
	time.Sleep(200 * time.Millisecond)
	if third := pid(); third == first {
		t.Fatalf("the shell %s outlived its connection", first)
	}

	// A host that cannot be reached: ErrConnection.
	dead := &SSH{Destination: sshtest.Alias, Args: append(srv.SSHArgs(), "-p", "1"), ControlDir: t.TempDir()}
	if err := dead.Prepare(); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := dead.Run(ctx, nil, "true"); !errors.Is(err, ErrConnection) {
		t.Fatalf("unreachable: %v", err)
	}
}
