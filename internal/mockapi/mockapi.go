// Test support, not product code: a mock of four model APIs (Anthropic,
// OpenAI Responses, Gemini, OpenAI chat) in one server. It is longer than
// ~400 lines because each API's streaming format is spelled out whole,
// next to the others, as the real-agent tests need them.

package mockapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/ctxtime"
	"github.com/runner-cli/runner/internal/transport"
)

// Turn is one scripted answer of the mock model.
//
// The mock picks, for each request, the first turn whose Match is a substring
// of the latest user prompt in the request (an empty Match matches any
// prompt; text a CLI sends beside a tool result, such as a hook's added
// context, is no prompt: see Request.Context). If the request's conversation ends with a tool result, the turn's
// Text is the final answer. Otherwise, if Write or Shell is set and the
// request offers a matching tool, the answer is that tool call; else it is
// Text.
type Turn struct {
	// Match selects the turn: a substring of the latest user prompt; "" matches any.
	Match string
	// Text is the answer (or the final answer after a tool result).
	Text string
	// Reply, if set, makes Text from the latest user prompt (an answer
	// that names what the prompt names, such as a vote for a candidate).
	Reply func(prompt string) string
	// Write, if set, makes the first answer a tool call that writes a file.
	Write *FileWrite
	// Shell, if set (and Write is not), makes the first answer a tool call
	// that runs this shell command line.
	Shell string
	// Tool, if set (and Write and Shell are not), makes the first answer
	// a call of a tool the CLI offers by name, such as an MCP server's
	// (see ToolCall).
	Tool *ToolCall
	// ToolText, if set, is text the model's tool call comes with (before
	// the call, in the same response, as a model that says what it will
	// do: "I'll create the file."): not the turn's answer, which is Text,
	// after the tool ran.
	ToolText string
	// Escalate makes a Codex shell call ask for unsandboxed execution
	// (sandbox_permissions "require_escalated" with a justification), so that
	// Codex shows its approval dialog even where its sandbox would let the
	// command run unasked. The other CLIs ask anyway and ignore it.
	Escalate bool
	// Delay is how long the mock waits before sending the first byte
	// (the CLI shows its busy state meanwhile).
	Delay time.Duration
	// ChunkDelay is the pause between streamed chunks of Text (one chunk per
	// word), so streaming is visible on screen.
	ChunkDelay time.Duration
	// Usage, if set, is the usage each of the turn's replies reports (in
	// each API's own fields); otherwise 10 tokens in, 10 out, none cached.
	Usage *Usage
	// Limit, if set, answers the turn's requests with HTTP 429 until its
	// time: the provider's usage or rate limit, in each API's own words.
	Limit *Limit
}

// Limit is a usage limit the mock enforces on a turn's requests: HTTP 429
// for For from the first of them, with a Retry-After header and each API's
// error body saying when to try again; after it the turn is answered as
// usual.
type Limit struct {
	For time.Duration
	// Quota says the limit is a quota used up (Gemini's daily quota,
	// OpenAI's insufficient_quota), which the CLIs do not retry, rather
	// than a rate limit to retry after Retry-After. A quota's 429 has no
	// Retry-After header in the OpenAI dialects (as OpenAI's own).
	Quota bool

	mu    sync.Mutex
	until time.Time
}

// Until is when the limit ends: For after the first request it answered
// (now, at the first call).
func (l *Limit) Until() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.until.IsZero() {
		l.until = clock.Now().Add(l.For)
	}
	return l.until
}

// Usage is what one reply of the mock says it used: Input tokens not
// cached, Cached input tokens read from the cache, Output tokens. Each API
// reports it in its own fields (Anthropic: input_tokens and
// cache_read_input_tokens apart; OpenAI and Gemini: a prompt count that
// includes the cached tokens, and the cached count).
type Usage struct {
	Input, Output, Cached int64
}

// defaultUsage is the usage of a reply whose turn sets none.
var defaultUsage = Usage{Input: 10, Output: 10}

// FileWrite is a tool call that writes Content to Path. Give an absolute
// Path inside the directory the CLI runs in: Claude Code, Gemini CLI and
// opencode require an absolute path, and Gemini CLI refuses a path outside
// its workspace without asking (the turn then ends with no approval dialog).
type FileWrite struct {
	Path    string
	Content string
}

// DefaultText is the answer when no turn matches.
const DefaultText = "MOCK-OK"

// Request is one request the mock received, summarised for debugging.
type Request struct {
	Time   time.Time
	Method string
	Path   string
	// API names the dialect: "anthropic", "responses", "chat", "gemini", or
	// "unknown".
	API string
	// Model is the model the client asked for.
	Model  string
	Stream bool
	// Prompt is the latest user prompt found in the request (truncated).
	Prompt string
	// Match is the Match of the turn that answered it ("" for none, or a
	// turn that matches any prompt): which turn a request was, when the
	// CLI puts more text after its prompt than Prompt keeps (Kilo Code).
	Match string
	// Tools lists the tool names the request offered.
	Tools []string
	// ToolResult is true when the conversation ended with a tool result.
	ToolResult bool
	// Context is the text the CLI sent with the tool results of the
	// conversation since the latest user prompt, at most maxContext
	// bytes; it never selects a turn. Anthropic's dialect: the text beside
	// them (a hook's additionalContext as a system reminder next to a
	// tool_result, or a system message after it). Chat Completions and
	// Gemini: the tool results' own text too, where those CLIs' hooks
	// append theirs (Qwen Code, Gemini CLI's "<hook_context>").
	// Responses (Codex): none.
	Context string
	// ToolOutput is the text of the tool results since the latest user
	// prompt (what a tool gave back to the model), at most maxContext
	// bytes. Anthropic's dialect only; the others carry it in Context.
	ToolOutput string
	// Reply says what the mock answered: "text: ...", "tool: NAME {...}",
	// or "status N".
	Reply string
	// Usage is the usage the reply reported.
	Usage Usage
	// Ended is when the mock began to write the last event of its reply
	// (for a reply that is no stream, when it was written): the client
	// cannot have had the whole answer before. (A clock read after the
	// write can come late on a loaded machine, after the client acted on
	// it.) Zero while it streams.
	Ended time.Time
	// lastWrite is when the reply's last event began (see sse.event).
	lastWrite time.Time
}

// String formats r as one log line.
func (r Request) String() string {
	ctx := ""
	if r.Context != "" {
		ctx = fmt.Sprintf(" context=%q", truncate(r.Context, 200))
	}
	return fmt.Sprintf("%s %s api=%s model=%q stream=%v tools=[%s] toolresult=%v prompt=%q%s -> %s",
		r.Method, r.Path, r.API, r.Model, r.Stream, truncate(strings.Join(r.Tools, " "), 200), r.ToolResult, r.Prompt, ctx, r.Reply)
}

// Server is a running mock on 127.0.0.1. Its methods are safe for concurrent use.
type Server struct {
	srv   *httptest.Server
	turns []Turn
	log   io.Writer

	mu   sync.Mutex
	reqs []Request
	seq  int
}

// Options configures a Server.
type Options struct {
	// Log, if not nil, receives one line per request (Request.String);
	// writes are serialised by the Server.
	Log io.Writer
}

// Start starts a mock answering with turns on a free port of 127.0.0.1.
// Close it when done.
func Start(turns []Turn, opts Options) *Server {
	s := &Server{turns: append([]Turn(nil), turns...), log: opts.Log}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the base URL of the mock, e.g. "http://127.0.0.1:41234" (no trailing slash).
func (s *Server) URL() string { return s.srv.URL }

// Close stops the mock and waits for its requests to finish.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Requests returns a copy of the requests received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

func (s *Server) record(r Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, r)
	if s.log != nil {
		// Under the lock: handlers run concurrently and Log need not be
		// safe for concurrent use.
		fmt.Fprintf(s.log, "mockapi: %s\n", r)
	}
	return len(s.reqs) - 1
}

// ended records when request i's reply was complete.
func (s *Server) ended(i int, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= 0 && i < len(s.reqs) {
		s.reqs[i].Ended = at
	}
}

func (s *Server) nextID(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return fmt.Sprintf("%s%d", prefix, s.seq)
}

// conv is a request reduced to what decides the reply.
type conv struct {
	model      string
	stream     bool
	prompt     string
	tools      []string
	toolResult bool
	// calledTools are the tools the model called in its latest answer
	// (Anthropic's API: the tool results that follow are theirs).
	calledTools []string
	context     string // text beside tool results (Request.Context)
	toolOutput  string // the tool results' own text (Request.ToolOutput)
}

// maxContext bounds a logged request's Context.
const maxContext = 16 << 10

// reply is what the mock answers: a text, or a tool call.
type reply struct {
	text  string
	tool  string          // tool name; "" for a text reply
	args  json.RawMessage // JSON object of the tool's arguments
	input string          // for freeform (custom) tools: the raw input
	// lead is the text that comes with a tool call (Turn.ToolText).
	lead string
	turn Turn
}

func (r reply) String() string {
	if r.tool == "" {
		return "text: " + truncate(r.text, 60)
	}
	lead := ""
	if r.lead != "" {
		lead = "text " + strconv.Quote(truncate(r.lead, 40)) + " + "
	}
	if r.input != "" {
		return lead + "tool: " + r.tool + " " + truncate(r.input, 80)
	}
	return lead + "tool: " + r.tool + " " + truncate(string(r.args), 80)
}

// toolMap maps a generic action to a concrete tool of one CLI.
type toolMap struct {
	name string
	args func(t Turn) (args json.RawMessage, input string)
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps of strings are marshalled here
	}
	return b
}

// writeTools are the file-writing tools of the CLIs, by tool name.
var writeTools = []toolMap{
	{"Write", func(t Turn) (json.RawMessage, string) { // Claude Code
		return mustJSON(map[string]string{"file_path": t.Write.Path, "content": t.Write.Content}), ""
	}},
	{"write_file", func(t Turn) (json.RawMessage, string) { // Gemini CLI
		return mustJSON(map[string]string{"file_path": t.Write.Path, "content": t.Write.Content}), ""
	}},
	{"write", func(t Turn) (json.RawMessage, string) { // opencode (filePath), pi (path)
		return mustJSON(map[string]string{"filePath": t.Write.Path, "path": t.Write.Path, "content": t.Write.Content}), ""
	}},
	{"create", func(t Turn) (json.RawMessage, string) { // GitHub Copilot CLI
		return mustJSON(map[string]string{"path": t.Write.Path, "file_text": t.Write.Content}), ""
	}},
	{"Create", func(t Turn) (json.RawMessage, string) { // Factory Droid
		return mustJSON(map[string]string{"file_path": t.Write.Path, "content": t.Write.Content}), ""
	}},
	{"apply_patch", func(t Turn) (json.RawMessage, string) { // Codex
		return nil, addFilePatch(t.Write.Path, t.Write.Content)
	}},
	{"editor", func(t Turn) (json.RawMessage, string) { // Cline (no old_text: create)
		return mustJSON(map[string]string{"path": t.Write.Path, "new_text": t.Write.Content}), ""
	}},
}

// shellTools are the shell tools of the CLIs, by tool name.
var shellTools = []toolMap{
	{"Bash", func(t Turn) (json.RawMessage, string) { // Claude Code
		return mustJSON(map[string]string{"command": t.Shell, "description": "Run the requested command"}), ""
	}},
	{"run_shell_command", func(t Turn) (json.RawMessage, string) { // Gemini CLI
		return mustJSON(map[string]string{"command": t.Shell, "description": "Run the requested command"}), ""
	}},
	{"bash", func(t Turn) (json.RawMessage, string) { // opencode
		return mustJSON(map[string]string{"command": t.Shell, "description": "Run the requested command"}), ""
	}},
	{"Execute", func(t Turn) (json.RawMessage, string) { // Factory Droid (its risk level decides what its autonomy runs unasked)
		return mustJSON(map[string]string{"command": t.Shell, "summary": "Run the requested command", "riskLevelReason": "The user asked for it.", "riskLevel": "medium"}), ""
	}},
	{"shell", func(t Turn) (json.RawMessage, string) { // Codex (array form)
		return mustJSON(map[string]any{"command": []string{"bash", "-lc", t.Shell}}), ""
	}},
	{"shell_command", func(t Turn) (json.RawMessage, string) { // Codex (string form)
		return mustJSON(map[string]any{"command": t.Shell}), ""
	}},
	{"run_commands", func(t Turn) (json.RawMessage, string) { // Cline
		return mustJSON(map[string]any{"commands": []string{t.Shell}}), ""
	}},
	{"exec_command", func(t Turn) (json.RawMessage, string) { // Codex (unified exec)
		args := map[string]any{"cmd": t.Shell}
		if t.Escalate {
			args["sandbox_permissions"] = "require_escalated"
			args["justification"] = "The mock model asks to run this command outside the sandbox."
		}
		return mustJSON(args), ""
	}},
}

// addFilePatch is an apply_patch body that creates path with content.
func addFilePatch(path, content string) string {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n*** Add File: " + path + "\n")
	for _, l := range strings.SplitAfter(strings.TrimSuffix(content, "\n"), "\n") {
		b.WriteString("+" + strings.TrimSuffix(l, "\n") + "\n")
	}
	b.WriteString("*** End Patch\n")
	return b.String()
}

// decide picks the reply for a request.
func (s *Server) decide(c conv) reply {
	t, ok := s.match(c.prompt)
	if !ok {
		return reply{text: DefaultText}
	}
	r := reply{text: t.Text, turn: t}
	if len(c.tools) == 0 {
		// A side request (title, summary, router): answer at once, so the
		// turn's delays are spent only on the agent's own requests.
		r.turn.Delay, r.turn.ChunkDelay = 0, 0
	}
	if r.text == "" {
		r.text = DefaultText
	}
	if t.Write == nil && t.Shell == "" && t.Tool != nil {
		return toolReply(r, c, t)
	}
	if c.toolResult {
		return r
	}
	var candidates []toolMap
	switch {
	case t.Write != nil:
		candidates = writeTools
	case t.Shell != "":
		candidates = shellTools
	}
	if !pick(&r, candidates, c.tools, t) && t.Write != nil {
		// No file-writing tool offered (Codex with an unknown model offers
		// only exec_command): write the file through the shell tool.
		st := t
		st.Shell = "printf '%s' " + transport.Quote(t.Write.Content) + " > " + transport.Quote(t.Write.Path)
		pick(&r, shellTools, c.tools, st)
	}
	if r.tool != "" {
		r.lead = t.ToolText
	}
	return r
}

// toolSearch is Claude Code's tool that loads deferred tools (2.1.2xx and
// later defer an MCP server's tools behind it: their names are not in a
// request's tools until the model searches for them).
const toolSearch = "ToolSearch"

// toolReply is r for a turn that calls t.Tool: the call when the tool is
// offered; a search for it when only ToolSearch is (then, the search's
// result back, the call); the text once a tool's result is back.
func toolReply(r reply, c conv, t Turn) reply {
	name, offered := t.Tool.offeredAs(c.tools)
	searched := slices.Contains(c.calledTools, toolSearch)
	switch {
	case offered && (!c.toolResult || searched):
		r.tool, r.args, r.lead = name, mustJSON(t.Tool.argsOrEmpty()), t.ToolText
	case !offered && !c.toolResult && slices.Contains(c.tools, toolSearch):
		r.tool, r.args = toolSearch, mustJSON(map[string]any{"query": t.Tool.Name, "max_results": 5})
	}
	return r
}

// pick sets r to a call of the first of candidates that is offered.
func pick(r *reply, candidates []toolMap, offered []string, t Turn) bool {
	for _, m := range candidates {
		for _, o := range offered {
			if o == m.name {
				r.tool = m.name
				r.args, r.input = m.args(t)
				return true
			}
		}
	}
	return false
}

func (s *Server) match(prompt string) (Turn, bool) {
	for _, t := range s.turns {
		if t.Match == "" || strings.Contains(prompt, t.Match) {
			if t.Reply != nil {
				t.Text = t.Reply(prompt)
			}
			return t, true
		}
	}
	return Turn{}, false
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	rec := Request{Time: clock.Now(), Method: r.Method, Path: r.URL.Path, API: "unknown"}
	// Model requests are logged as soon as the reply is chosen (before any
	// delay), so a request the CLI is waiting on already shows in the log.
	logged, idx := false, -1
	logNow := func() {
		if !logged {
			logged = true
			idx = s.record(rec)
		}
	}
	defer func() {
		logNow()
		at := clock.Now()
		if !rec.lastWrite.IsZero() {
			at = rec.lastWrite
		}
		s.ended(idx, at)
	}()
	path := r.URL.Path
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/messages/count_tokens"):
		rec.API = "anthropic"
		rec.Reply = "count_tokens"
		writeJSON(w, map[string]any{"input_tokens": len(body)/4 + 1})
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/messages"):
		rec.API = "anthropic"
		s.anthropic(w, r, body, &rec, logNow)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/responses"):
		rec.API = "responses"
		s.responses(w, r, body, &rec, logNow)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/chat/completions"):
		rec.API = "chat"
		s.chat(w, r, body, &rec, logNow)
	case r.Method == http.MethodPost && strings.Contains(path, "/models/") && strings.Contains(path, ":"):
		rec.API = "gemini"
		s.gemini(w, r, body, &rec, logNow)
	case r.Method == http.MethodGet && path == "/api.json":
		// opencode's model catalogue (OPENCODE_MODELS_URL): nothing extra;
		// the mock provider is declared in its config.
		rec.Reply = "models catalogue"
		writeJSON(w, map[string]any{})
	case (r.Method == http.MethodGet || r.Method == http.MethodHead) && path == "/":
		// Claude Code probes the base URL with HEAD /.
		rec.Reply = "status 200"
		w.WriteHeader(http.StatusOK)
	case r.Method == http.MethodGet && strings.HasSuffix(path, "/models"):
		rec.Reply = "model list"
		writeJSON(w, modelList())
	default:
		rec.Reply = "status 404"
		if len(body) > 0 {
			rec.Prompt = truncate(string(body), 120)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"error":{"type":"not_found_error","message":"mockapi: no handler for %s %s"}}`, r.Method, path)
	}
}

// fill copies a parsed conversation into the log record.
func (rec *Request) fill(c conv, rp reply) {
	rec.Model, rec.Stream, rec.Prompt, rec.Tools, rec.ToolResult = c.model, c.stream, tail(c.prompt, 120), c.tools, c.toolResult
	rec.Match = rp.turn.Match
	rec.Context = c.context[:min(len(c.context), maxContext)]
	rec.ToolOutput = c.toolOutput[:min(len(c.toolOutput), maxContext)]
	rec.Reply = rp.String()
	rec.Usage = rp.usage()
}

// usage is what the reply reports it used.
func (r reply) usage() Usage {
	if r.turn.Usage != nil {
		return *r.turn.Usage
	}
	return defaultUsage
}

func modelList() map[string]any {
	// One list that satisfies both the OpenAI ({object, data[{id}]}) and the
	// Anthropic ({data[{id, type}]}) shapes.
	return map[string]any{
		"object":   "list",
		"has_more": false,
		"data": []map[string]any{
			{"id": "mock-model", "object": "model", "type": "model", "display_name": "Mock Model", "owned_by": "mockapi", "created": 0},
		},
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// limited answers a request of api with HTTP 429 when rp's turn has a
// Limit not yet over; it reports whether it did.
func limited(w http.ResponseWriter, rec *Request, api string, rp reply) bool {
	l := rp.turn.Limit
	if l == nil || !clock.Now().Before(l.Until()) {
		return false
	}
	until := l.Until()
	secs := int(clock.Until(until).Round(time.Second) / time.Second)
	secs = max(secs, 1)
	msg := fmt.Sprintf("Rate limit reached for requests. Please try again in %ds.", secs)
	var body any
	switch api {
	case "anthropic":
		body = map[string]any{"type": "error", "error": map[string]any{"type": "rate_limit_error", "message": msg}}
		w.Header().Set("anthropic-ratelimit-unified-status", "rejected")
		w.Header().Set("anthropic-ratelimit-unified-reset", strconv.FormatInt(until.Unix(), 10))
	case "responses":
		// Codex reads usage_limit_reached with its reset apart from a
		// plain rate limit.
		body = map[string]any{"error": map[string]any{"type": "usage_limit_reached", "message": "You've hit your usage limit.",
			"plan_type": "plus", "resets_in_seconds": secs, "resets_at": until.Unix()}}
	case "gemini":
		details := []any{map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": fmt.Sprintf("%ds", secs)}}
		if l.Quota {
			details = append(details, map[string]any{"@type": "type.googleapis.com/google.rpc.QuotaFailure",
				"violations": []any{map[string]any{"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
					"quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}}})
		}
		body = map[string]any{"error": map[string]any{"code": 429, "status": "RESOURCE_EXHAUSTED",
			"message": fmt.Sprintf("You exceeded your current quota. Please retry in %ds.", secs), "details": details}}
	case "chat":
		if l.Quota {
			body = map[string]any{"error": map[string]any{"message": "You exceeded your current quota, please check your plan and billing details.",
				"type": "insufficient_quota", "code": "insufficient_quota"}}
			break
		}
		fallthrough
	default:
		body = map[string]any{"error": map[string]any{"message": msg, "type": "rate_limit_exceeded", "code": "rate_limit_exceeded"}}
	}
	rec.Reply = fmt.Sprintf("status 429 (limit for %ds)", secs)
	if !l.Quota || (api != "chat" && api != "responses") {
		w.Header().Set("Retry-After", strconv.Itoa(secs))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusTooManyRequests)
	_ = json.NewEncoder(w).Encode(body)
	return true
}

func badRequest(w http.ResponseWriter, rec *Request, err error) {
	rec.Reply = "status 400: " + err.Error()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"type": "invalid_request_error", "message": "mockapi: " + err.Error()}})
}

// sse writes server-sent events, flushing after each one, and honours the
// turn's delays. It stops (returning false) when the client went away.
type sse struct {
	w   http.ResponseWriter
	r   *http.Request
	f   http.Flusher
	rec *Request // its lastWrite is set as each event begins
	err bool
}

func newSSE(w http.ResponseWriter, r *http.Request, rec *Request) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, r: r, f: f, rec: rec}
}

// event writes one event; name "" writes a data-only event.
func (e *sse) event(name string, data any) {
	if e.err {
		return
	}
	var payload []byte
	switch d := data.(type) {
	case string:
		payload = []byte(d)
	default:
		b, err := json.Marshal(d)
		if err != nil {
			panic(err) // only maps and slices built here are marshalled
		}
		payload = b
	}
	e.rec.lastWrite = clock.Now()
	var err error
	if name != "" {
		_, err = fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", name, payload)
	} else {
		_, err = fmt.Fprintf(e.w, "data: %s\n\n", payload)
	}
	if err != nil {
		e.err = true
		return
	}
	if e.f != nil {
		e.f.Flush()
	}
}

// sleep waits d or until the client goes away.
func (e *sse) sleep(d time.Duration) {
	if d <= 0 || e.err {
		return
	}
	sleepCtx(e.r, d)
}

// sleepCtx waits d unless the request ends first (false then).
func sleepCtx(r *http.Request, d time.Duration) bool { return ctxtime.Sleep(r.Context(), d) == nil }

// chunks splits text into streamable pieces (words with their trailing space).
func chunks(text string) []string {
	var out []string
	for len(text) > 0 {
		i := strings.IndexByte(text, ' ')
		if i < 0 {
			out = append(out, text)
			break
		}
		out = append(out, text[:i+1])
		text = text[i+1:]
	}
	return out
}

// tail is the last n bytes of s with white space squeezed (the prompt is at
// the end of what the CLIs send; context they add comes first).
func tail(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

func truncate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
