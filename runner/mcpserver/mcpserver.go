// Package mcpserver is runner's MCP server (the Model Context Protocol,
// through the official Go SDK): tools an MCP client (an agent's CLI, an
// editor, a bot) calls to drive runner — runner_dispatch, runner_list,
// runner_status, runner_wait, runner_send, runner_answer, runner_cancel
// and runner_events.
//
// Each tool runs runner itself (Options.Exe) with an argv, never a shell,
// and gives back what its --json printed: the tools are the CLI, so they
// say what it says and refuse what it refuses. A non-zero exit is a tool
// error (IsError) whose text is runner's stderr and the exit code's
// meaning. A dispatch is always detached (the task record comes back at
// once); a wait is bounded (MaxWait); an events call returns one page.
//
// Two ways in: Stdio (runner mcp, started by the client) and HTTPHandler
// (streamable HTTP, which runner serve mounts at /mcp behind its token).
// A sandboxed agent reaches neither: runner mcp is not a command its
// door carries (runner/door.Commands), and runner serve's token lies in
// runner's state directory, which its sandbox hides.
//
// Of the module it imports only state (the events' cursor) and
// internal/textutil (TestImports).
package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os/exec"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runner-cli/runner/internal/subproc"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/state"
)

// Options say how the server runs runner.
type Options struct {
	Exe     string   // runner's executable
	Environ []string // each run's environment (nil: the server's own)
	Dir     string   // each run's folder ("": the server's)
	Version string   // runner's version, told to clients
	Logger  *slog.Logger
	// Exec runs runner; nil: Options.run, the real one (a test seam).
	Exec func(ctx context.Context, argv []string, stdin string, stdout io.Writer) Result
	// Meaning says in words what runner's exit code means: cmd/runner
	// gives its table (the one place exit codes are known); nil: nothing
	// said beside the number.
	Meaning func(code int) string
}

// Result is one run of runner: its exit code and standard error
// (bounded), or Err when runner could not be run or was stopped before it
// exited (Code is then not runner's).
type Result struct {
	Code   int
	Stderr string
	Err    error
}

// ok reports whether runner ran and exited 0.
func (r Result) ok() bool { return r.Err == nil && r.Code == 0 }

// Output bounds: a task list of thousands fits, a flood does not.
const (
	maxStdout = 8 << 20
	maxStderr = 64 << 10
)

// New returns the server with runner's tools.
func New(opts Options) *mcp.Server {
	if opts.Exec == nil {
		opts.Exec = opts.run
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "runner", Title: "runner", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       opts.Logger,
		Capabilities: &mcp.ServerCapabilities{},
	})
	t := tools{opts: opts}
	mcp.AddTool(s, &mcp.Tool{Name: "runner_dispatch", Description: "Dispatch a task to a coding agent in a tmux pane (runner dispatch --detach): returns the task record at once; follow it with runner_wait or runner_status.",
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: ptr(true)}}, t.dispatch)
	mcp.AddTool(s, &mcp.Tool{Name: "runner_list", Description: "List runner's tasks (runner ps --all --json): id, project, agent, status, times.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, t.list)
	mcp.AddTool(s, &mcp.Tool{Name: "runner_status", Description: "One task's record (runner status --json): its status, and when it needs input, the dialog on its screen and the dialog's digest for runner_answer.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, t.status)
	mcp.AddTool(s, &mcp.Tool{Name: "runner_wait", Description: "Wait for a task to end (runner wait --json), at most timeout (default 60s, at most 10m): the task's record; an error when the task failed, timed out, needs input, or the wait gave up (the task then goes on: wait again).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, t.wait)
	mcp.AddTool(s, &mcp.Tool{Name: "runner_send", Description: "Send a follow-up text to a task's agent (runner send --detach): the task's record; follow it with runner_wait.",
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: ptr(true)}}, t.send)
	mcp.AddTool(s, &mcp.Tool{Name: "runner_answer", Description: "Answer the dialog a task waits on (runner answer): presses option only if the screen still shows the dialog whose digest runner_status gave; the same op twice presses once. Returns the receipt.",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, OpenWorldHint: ptr(true)}}, t.answer)
	mcp.AddTool(s, &mcp.Tool{Name: "runner_cancel", Description: "Cancel a task (runner cancel --json): its agent is stopped, its record says cancelled.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true}}, t.cancel)
	mcp.AddTool(s, &mcp.Tool{Name: "runner_events", Description: "A page of runner's event stream (runner events --json): every change of every task, oldest first, each with its cursor; ask again with after set to the page's next for the following page.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, t.events)
	return s
}

const instructions = `runner drives coding agents (Claude Code, Codex, …) in tmux panes. Dispatch a task with runner_dispatch (project: a registered project's name or an absolute directory), then runner_wait on its id (bounded: wait again while it is still at work). When a task needs input, runner_status shows the dialog and its digest; answer it with runner_answer. Every tool returns what runner's --json prints.`

func ptr[T any](v T) *T { return &v }

// Stdio serves one client over in and out (newline-delimited JSON-RPC,
// the stdio transport) until it goes or ctx ends.
func Stdio(ctx context.Context, opts Options, in io.Reader, out io.Writer) error {
	err := New(opts).Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopCloser{out}})
	if errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil
	}
	return err
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// HTTPHandler serves the tools over streamable HTTP, stateless: each
// request stands alone, nothing is kept between them, and a client that
// goes away cancels its call (runner is stopped). It authenticates no
// one: mount it behind runner serve's token.
func HTTPHandler(opts Options) http.Handler {
	s := New(opts)
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{
		Stateless:                    true,
		Logger:                       opts.Logger,
		PropagateRequestCancellation: true,
	})
}

type tools struct{ opts Options }

// call runs runner with argv and stdin and makes its output the result.
func (t tools) call(ctx context.Context, argv []string, stdin string) (*mcp.CallToolResult, any, error) {
	out := &textutil.HeadWriter{Max: maxStdout}
	r := t.opts.Exec(ctx, argv, stdin, out)
	return result(out.Bytes(), r, t.opts.Meaning), nil, nil
}

// result is the tool result of a run: what runner printed; a tool error
// (its stderr, the exit code said) when it exited non-zero.
func result(stdout []byte, r Result, meaning func(int) string) *mcp.CallToolResult {
	stdout = bytes.TrimSpace(stdout)
	if r.ok() {
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(stdout)}}}
		if len(stdout) > 0 && stdout[0] == '{' && json.Valid(stdout) {
			res.StructuredContent = json.RawMessage(stdout)
		}
		return res
	}
	var text string
	switch {
	case r.Err != nil:
		text = fmt.Sprintf("runner did not finish (%v)", r.Err)
	case meaning != nil:
		text = fmt.Sprintf("runner exited %d (%s)", r.Code, meaning(r.Code))
	default:
		text = fmt.Sprintf("runner exited %d", r.Code)
	}
	if e := strings.TrimSpace(r.Stderr); e != "" {
		text += ": " + e
	}
	content := []mcp.Content{&mcp.TextContent{Text: text}}
	if len(stdout) > 0 {
		content = append(content, &mcp.TextContent{Text: string(stdout)})
	}
	return &mcp.CallToolResult{IsError: true, Content: content}
}

func (t tools) dispatch(ctx context.Context, _ *mcp.CallToolRequest, a DispatchArgs) (*mcp.CallToolResult, any, error) {
	argv, stdin, err := a.argv()
	if err != nil {
		return nil, nil, err
	}
	return t.call(ctx, argv, stdin)
}

func (t tools) list(ctx context.Context, _ *mcp.CallToolRequest, a ListArgs) (*mcp.CallToolResult, any, error) {
	return t.call(ctx, a.argv(), "")
}

func (t tools) status(ctx context.Context, _ *mcp.CallToolRequest, a IDArgs) (*mcp.CallToolResult, any, error) {
	return t.call(ctx, []string{"status", "--json", "--", a.ID}, "")
}

func (t tools) cancel(ctx context.Context, _ *mcp.CallToolRequest, a IDArgs) (*mcp.CallToolResult, any, error) {
	return t.call(ctx, []string{"cancel", "--json", "--", a.ID}, "")
}

func (t tools) wait(ctx context.Context, _ *mcp.CallToolRequest, a WaitArgs) (*mcp.CallToolResult, any, error) {
	argv, err := a.argv()
	if err != nil {
		return nil, nil, err
	}
	return t.call(ctx, argv, "")
}

func (t tools) send(ctx context.Context, _ *mcp.CallToolRequest, a SendArgs) (*mcp.CallToolResult, any, error) {
	argv, stdin, err := a.argv()
	if err != nil {
		return nil, nil, err
	}
	return t.call(ctx, argv, stdin)
}

func (t tools) answer(ctx context.Context, _ *mcp.CallToolRequest, a AnswerArgs) (*mcp.CallToolResult, any, error) {
	return t.call(ctx, a.argv(newOp), "")
}

// newOp is a fresh operation id for an answer given none.
func newOp() string {
	b := make([]byte, 12)
	rand.Read(b)
	return "mcp-" + hex.EncodeToString(b)
}

// events reads runner events' lines until the page is full, then stops
// runner: the stream's length never matters.
func (t tools) events(ctx context.Context, _ *mcp.CallToolRequest, a EventsArgs) (*mcp.CallToolResult, any, error) {
	argv, limit := a.argv()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	page := &pageWriter{limit: limit, full: stop, page: EventsPage{Events: []json.RawMessage{}, Next: a.After}}
	r := t.opts.Exec(ctx, argv, "", page)
	if !r.ok() && !page.page.More {
		return result(nil, r, t.opts.Meaning), nil, nil
	}
	page.flush()
	b, err := json.Marshal(page.page)
	if err != nil {
		return nil, nil, err
	}
	return result(b, Result{}, nil), nil, nil
}

// pageWriter keeps the first limit lines of runner events --json, each
// an event; at the one past them the page is full (More) and runner is
// stopped.
type pageWriter struct {
	limit int
	full  func()
	page  EventsPage
	line  []byte
}

func (w *pageWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && !w.page.More {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(w.line) < maxStdout {
				w.line = append(w.line, p...)
			}
			break
		}
		w.line = append(w.line, p[:i]...)
		p = p[i+1:]
		w.flush()
	}
	return n, nil
}

// flush takes the line kept so far as an event.
func (w *pageWriter) flush() {
	line := bytes.TrimSpace(w.line)
	w.line = w.line[:0]
	if len(line) == 0 || w.page.More || !json.Valid(line) {
		return
	}
	if len(w.page.Events) == w.limit {
		w.page.More = true
		w.full()
		return
	}
	if c, ok := state.EventCursor(line); ok {
		w.page.Next = c
	}
	w.page.Events = append(w.page.Events, json.RawMessage(bytes.Clone(line)))
}

// run runs runner (Exe) with argv in its own process group: the call's
// end (a client that cancels or goes away) stops it and whatever it
// started in the foreground.
func (o Options) run(ctx context.Context, argv []string, stdin string, stdout io.Writer) Result {
	cmd := subproc.Group(ctx, o.Exe, argv...)
	cmd.Dir = o.Dir
	cmd.Env = o.Environ
	cmd.Stdin = strings.NewReader(stdin)
	errOut := &textutil.HeadWriter{Max: maxStderr}
	cmd.Stdout, cmd.Stderr = stdout, errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return Result{}
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return Result{Code: ee.ExitCode(), Stderr: errOut.String()}
	case ctx.Err() != nil:
		return Result{Stderr: errOut.String(), Err: fmt.Errorf("stopped: %w", ctx.Err())}
	default:
		return Result{Stderr: errOut.String(), Err: fmt.Errorf("the MCP server could not run runner: %w", err)}
	}
}
