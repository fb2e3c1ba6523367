// Package door is the one channel between a sandboxed agent and runner.
//
// A sandboxed task sees nothing of runner's state directory, config or
// tmux socket (package sandbox hides them). What its agent may still ask
// of runner — runner msg, inbox, status, ps, tree, wait, a child dispatch,
// runner ask — goes through a unix socket that the task's supervisor
// serves, bound read-only into the sandbox: the socket knows the caller's
// task (it is that task's alone), and the supervisor runs the request as
// runner outside, confined (RUNNER_CONFINED): only the commands of
// Commands, a child dispatch sandboxed and in the task's own folder, no
// command of the agent's ever run outside (--notify, --host are refused).
// The hook events go another way: the task's events file alone is bound
// writable, and runner reads it as untrusted input.
//
// The wire: one request, one response, each a JSON object on one line
// (Request, Response), bounded by MaxMessage. ParseRequest reads a
// request strictly (unknown fields, too many or too long arguments, NUL
// bytes and a first argument outside Commands are refused). The
// supervisor opens a task's door (Open: Serve with a Handler, such as a
// Runner); inside the sandbox, runner sends its commands through it with
// Forward (Call). ConfinedFlags and ReadConfinedFile are what runner
// outside takes from a confined request.
package door

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/fault"
)

// Env names the variables of the channel: EnvDoor, in a sandboxed pane,
// is the socket's path; EnvConfined, in a request runner runs outside,
// is the calling task's id, and EnvConfinedDir its folder (the only place
// a --file of the request is read from).
const (
	EnvDoor        = "RUNNER_DOOR"
	EnvConfined    = "RUNNER_CONFINED"
	EnvConfinedDir = "RUNNER_CONFINED_DIR"
)

// SocketName is the socket's name in the task's door directory.
const SocketName = "door.sock"

// MaxMessage bounds a request and a response on the wire: a task text of
// some megabytes fits, a flood does not.
const MaxMessage = 8 << 20

// MaxArgs bounds a request's argument count.
const MaxArgs = 256

// Commands are the runner commands a sandboxed agent may ask for through
// the door: messaging, looking at tasks, and child dispatches.
var Commands = []string{"msg", "inbox", "status", "ps", "tree", "wait", "dispatch", "ask", "version"}

// ErrRefused is wrapped by a request the door does not carry.
var ErrRefused = errors.New("refused by runner's door")

// Request is what the agent's runner asks: its argv after "runner" and
// its standard input, when an argument ("-", "--file -") reads it.
type Request struct {
	Args  []string `json:"args"`
	Stdin []byte   `json:"stdin,omitempty"`
	// Cwd is the caller's folder: runner runs there when it lies inside
	// the task's folder, else in the task's folder.
	Cwd string `json:"cwd,omitempty"`
}

// Response is what runner answers: the command's output and exit code
// (Code, runner's own), or, when the door answered itself, the kind of
// its refusal (Fault): the caller's runner exits with the code cmd/runner
// gives the error Err makes of it. The door knows no exit code of its own.
type Response struct {
	Stdout []byte `json:"stdout,omitempty"`
	Stderr []byte `json:"stderr,omitempty"`
	Code   int    `json:"code"`
	Fault  Fault  `json:"fault,omitempty"`
}

// Fault is why the door answered a request itself, without runner's
// exit code.
type Fault string

// The door's own answers: FaultBusy, too many requests of the task at
// once (Limit); FaultRefused, a request the door does not carry
// (ParseRequest, ErrRefused); FaultUnrun, runner could not be run.
const (
	FaultBusy    Fault = "busy"
	FaultRefused Fault = "refused"
	FaultUnrun   Fault = "unrun"
)

// Err is the error of a response the door answered itself (nil for one
// runner answered): fault.ErrBusy for FaultBusy, ErrRefused for
// FaultRefused, a plain failure else.
func (r Response) Err() error {
	switch r.Fault {
	case "":
		return nil
	case FaultBusy:
		return fault.Busyf("runner's door is busy with other requests of this task; try again")
	case FaultRefused:
		return fmt.Errorf("%w: the request", ErrRefused)
	}
	return fmt.Errorf("runner's door could not run the request (%s)", clip(string(r.Fault)))
}

// Carried reports whether args is a command the door carries (what the
// agent's runner sends through it rather than running itself).
func Carried(args []string) bool {
	return len(args) > 0 && slices.Contains(Commands, args[0])
}

// ParseRequest reads one request from r, strictly.
func ParseRequest(r io.Reader) (Request, error) {
	line, err := readLine(r)
	if err != nil {
		return Request{}, err
	}
	var req Request
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return Request{}, fmt.Errorf("%w: a malformed request: %v", ErrRefused, err)
	}
	if dec.More() {
		return Request{}, fmt.Errorf("%w: more than one request", ErrRefused)
	}
	if len(req.Args) == 0 || len(req.Args) > MaxArgs {
		return Request{}, fmt.Errorf("%w: %d arguments (1 to %d)", ErrRefused, len(req.Args), MaxArgs)
	}
	for _, a := range req.Args {
		if strings.IndexByte(a, 0) >= 0 {
			return Request{}, fmt.Errorf("%w: an argument holds a NUL byte", ErrRefused)
		}
	}
	if !Carried(req.Args) {
		return Request{}, fmt.Errorf("%w: 'runner %s' is not open to a sandboxed task (it may use: runner %s)",
			ErrRefused, clip(req.Args[0]), strings.Join(Commands, ", runner "))
	}
	return req, nil
}

// readLine reads one line of at most MaxMessage bytes.
func readLine(r io.Reader) ([]byte, error) {
	br := bufio.NewReaderSize(io.LimitReader(r, MaxMessage+1), 64<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > MaxMessage {
			return nil, fmt.Errorf("%w: a message over %d bytes", ErrRefused, MaxMessage)
		}
		if err == nil {
			return line, nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) && len(line) > 0 {
			return line, nil
		}
		return nil, fmt.Errorf("read a message: %w", err)
	}
}

func clip(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// Handler answers one request.
type Handler func(ctx context.Context, req Request) Response

// Serve answers the requests that come on ln, each connection one
// request, at most limit at once (a connection over the limit is answered
// FaultBusy), until ctx ends; then it closes ln.
func Serve(ctx context.Context, ln net.Listener, limit int, h Handler) {
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	slots := make(chan struct{}, max(limit, 1))
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(50 * time.Millisecond) // EMFILE and the like: do not spin
			continue
		}
		select {
		case slots <- struct{}{}:
			go func() {
				defer func() { <-slots }()
				serveConn(ctx, conn, h)
			}()
		default:
			go func() {
				defer conn.Close()
				conn.SetDeadline(clock.Deadline(5 * time.Second))
				writeResponse(conn, Response{Stderr: []byte("runner: the door is busy with other requests of this task; try again\n"), Fault: FaultBusy})
			}()
		}
	}
}

func serveConn(ctx context.Context, conn net.Conn, h Handler) {
	defer conn.Close()
	conn.SetReadDeadline(clock.Deadline(30 * time.Second))
	req, err := ParseRequest(conn)
	conn.SetReadDeadline(time.Time{})
	var resp Response
	if err != nil {
		resp = Response{Stderr: []byte("runner: " + err.Error() + "\n"), Fault: FaultRefused}
	} else {
		// The request runs until it ends or the caller hangs up.
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() {
			var b [1]byte
			conn.Read(b[:]) // returns when the caller closes (or sends more, which it must not)
			cancel()
		}()
		resp = h(cctx, req)
	}
	writeResponse(conn, resp)
}

func writeResponse(w io.Writer, resp Response) {
	if len(resp.Stdout)+len(resp.Stderr) > MaxMessage/2 {
		resp.Stdout = resp.Stdout[:min(len(resp.Stdout), MaxMessage/4)]
		resp.Stderr = append(resp.Stderr[:min(len(resp.Stderr), MaxMessage/8)], "\nrunner: output cut to fit the door\n"...)
	}
	b, _ := json.Marshal(resp)
	w.Write(append(b, '\n'))
}

// Call sends req to the door at path and returns the answer.
func Call(ctx context.Context, path string, req Request) (Response, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return Response{}, fmt.Errorf("runner's door %s: %w (runner serves it while the task's supervisor runs)", path, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	b, err := json.Marshal(req)
	if err != nil {
		return Response{}, err
	}
	if len(b) > MaxMessage {
		return Response{}, fmt.Errorf("%w: a request of %d bytes (at most %d)", ErrRefused, len(b), MaxMessage)
	}
	if _, err := conn.Write(append(b, '\n')); err != nil {
		return Response{}, fmt.Errorf("runner's door %s: send: %w", path, err)
	}
	line, err := readLine(conn)
	if err != nil {
		if ctx.Err() != nil {
			return Response{}, ctx.Err()
		}
		return Response{}, fmt.Errorf("runner's door %s: %w", path, err)
	}
	var resp Response
	if err := json.Unmarshal(line, &resp); err != nil {
		return Response{}, fmt.Errorf("runner's door %s: a malformed answer: %w", path, err)
	}
	return resp, nil
}
