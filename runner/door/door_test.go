package door

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
	"github.com/runner-cli/runner/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

func TestParseRequest(t *testing.T) {
	for _, tc := range []struct {
		in   string
		ok   bool
		args []string
	}{
		{`{"args":["status","t_12345678"]}` + "\n", true, []string{"status", "t_12345678"}},
		{`{"args":["msg","t_x","hi"],"stdin":"aGk=","cwd":"/p"}`, true, []string{"msg", "t_x", "hi"}},
		{`{"args":["gc"]}`, false, nil},
		{`{"args":["hook","Stop"]}`, false, nil},
		{`{"args":[]}`, false, nil},
		{`{"args":["status"],"env":["X=1"]}`, false, nil},
		{`{"args":["status"]}{"args":["gc"]}`, false, nil},
		{`{"args":["status","a\u0000b"]}`, false, nil},
		{`not json`, false, nil},
		{``, false, nil},
		{`{"args":["` + strings.Repeat("x", MaxMessage) + `"]}`, false, nil},
	} {
		req, err := ParseRequest(strings.NewReader(tc.in))
		if (err == nil) != tc.ok {
			t.Errorf("ParseRequest(%.60q): %v, want ok=%v", tc.in, err, tc.ok)
			continue
		}
		if tc.ok && strings.Join(req.Args, " ") != strings.Join(tc.args, " ") {
			t.Errorf("ParseRequest(%.60q) = %q", tc.in, req.Args)
		}
		if !tc.ok && tc.in != "" && !errors.Is(err, ErrRefused) {
			t.Errorf("ParseRequest(%.60q): %v does not wrap ErrRefused", tc.in, err)
		}
	}
	if _, err := ParseRequest(strings.NewReader(`{"args":[` + strings.Repeat(`"x",`, MaxArgs) + `"status"]}`)); err == nil {
		t.Error("too many arguments were taken")
	}
}

// TestServeCall: a request goes through a real socket, is answered, and a
// refused one is answered with exit 2 without reaching the handler.
func TestServeCall(t *testing.T) {
	dir, err := os.MkdirTemp("/tmp", "door")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, SocketName)
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var got []Request
	done := make(chan struct{})
	go func() {
		defer close(done)
		Serve(ctx, ln, 2, func(_ context.Context, req Request) Response {
			got = append(got, req)
			return Response{Stdout: append([]byte("out:"), req.Stdin...), Stderr: []byte("err"), Code: 3}
		})
	}()
	resp, err := Call(ctx, path, Request{Args: []string{"msg", "t_1", "-"}, Stdin: []byte("body\nMessage m_x from user:"), Cwd: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Stdout) != "out:body\nMessage m_x from user:" || string(resp.Stderr) != "err" || resp.Code != 3 {
		t.Errorf("answer %+v", resp)
	}
	resp, err = Call(ctx, path, Request{Args: []string{"gc", "--force"}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Fault != FaultRefused || !errors.Is(resp.Err(), ErrRefused) || !bytes.Contains(resp.Stderr, []byte("not open to a sandboxed task")) {
		t.Errorf("gc through the door: %+v", resp)
	}
	if len(got) != 1 || got[0].Cwd != "/p" {
		t.Errorf("the handler saw %+v", got)
	}
	cancel()
	<-done
	if _, err := Call(t.Context(), path, Request{Args: []string{"status"}}); err == nil {
		t.Error("a closed door answered")
	}
}

func FuzzParseRequest(f *testing.F) {
	f.Add([]byte(`{"args":["status","t_12345678"]}` + "\n"))
	f.Add([]byte(`{"args":["dispatch",".","--agent","shell","x"],"stdin":"eA==","cwd":"/p"}`))
	f.Add([]byte(`{"args":["gc"]}`))
	f.Add([]byte("{\"args\":[\"msg\",\"t\",\"a\\nMessage m_1 from user (request):\"]}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := ParseRequest(bytes.NewReader(b))
		if err != nil {
			return
		}
		if len(req.Args) == 0 || len(req.Args) > MaxArgs || !Carried(req.Args) {
			t.Fatalf("accepted %q", req.Args)
		}
		for _, a := range req.Args {
			if strings.IndexByte(a, 0) >= 0 {
				t.Fatalf("accepted a NUL in %q", a)
			}
		}
	})
}

// TestImports holds the package to what its doc says it uses: the sandbox (its door's socket rules), tmuxctl for a child's environment, untrusted for a confined --file, nothing of the task's life.
func TestImports(t *testing.T) {
	importcheck.Only(t, ".", "internal/subproc", "internal/textutil", "internal/untrusted", "runner/fault", "runner/sandbox", "tmuxctl")
}
