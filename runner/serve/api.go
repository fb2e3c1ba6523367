package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/runner-cli/runner/state"
)

// MaxBody bounds a request's body.
const MaxBody = 1 << 20

// runTimeout bounds one runner process of a request.
const runTimeout = 2 * time.Minute

// decode reads r's body, a JSON object, into v: at most MaxBody bytes,
// Content-Type application/json, no unknown field, nothing after it.
func decode(r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return errors.New("the body must be application/json")
		}
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if err != nil {
		return fmt.Errorf("read the body: %w", err)
	}
	if len(body) > MaxBody {
		return fmt.Errorf("the body is larger than %d bytes", MaxBody)
	}
	return DecodeJSON(body, v)
}

// DecodeJSON decodes b, one JSON object, into v: unknown fields and
// anything after the object refused.
func DecodeJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("the body: %w", err)
	}
	if dec.More() {
		return errors.New("the body: one JSON object, nothing after it")
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("the body: one JSON object, nothing after it")
	}
	return nil
}

// DispatchRequest is POST /api/v1/tasks: the dispatch options a request
// may set (an allow-list; --notify, --host, --agent-arg and the like are
// not open to it).
type DispatchRequest struct {
	Project      string   `json:"project"`
	Task         string   `json:"task"`
	Agent        string   `json:"agent,omitempty"`
	Model        string   `json:"model,omitempty"`
	Permissions  string   `json:"permissions,omitempty"`
	Timeout      string   `json:"timeout,omitempty"`
	ReadyTimeout string   `json:"ready_timeout,omitempty"`
	Worktree     bool     `json:"worktree,omitempty"`
	Sandbox      bool     `json:"sandbox,omitempty"`
	Commit       bool     `json:"commit,omitempty"`
	Exclusive    bool     `json:"exclusive,omitempty"`
	YesTrust     bool     `json:"yes_trust,omitempty"`
	After        []string `json:"after,omitempty"`
	ApproveRule  []string `json:"approve_rule,omitempty"`
	MaxTurns     int      `json:"max_turns,omitempty"`
	BudgetTokens int64    `json:"budget_tokens,omitempty"`
	BudgetUSD    float64  `json:"budget_usd,omitempty"`
}

// Args returns the argv of `runner dispatch` for q (the task goes on
// standard input), or why q is refused.
func (q DispatchRequest) Args() ([]string, error) {
	if strings.TrimSpace(q.Task) == "" {
		return nil, errors.New("task: the task's text is required")
	}
	if !validProject(q.Project) {
		return nil, errors.New("project: a registered project's name or an absolute path")
	}
	args := []string{"dispatch", "--detach", "--json", "--file", "-"}
	for _, f := range []struct{ flag, v string }{{"agent", q.Agent}, {"model", q.Model}, {"permissions", q.Permissions}} {
		if f.v == "" {
			continue
		}
		if !validWord(f.v, 100) {
			return nil, fmt.Errorf("%s: %q is not a name", f.flag, f.v)
		}
		args = append(args, "--"+f.flag+"="+f.v)
	}
	for _, f := range []struct{ flag, v string }{{"timeout", q.Timeout}, {"ready-timeout", q.ReadyTimeout}} {
		if f.v == "" {
			continue
		}
		if d, err := time.ParseDuration(f.v); err != nil || d <= 0 {
			return nil, fmt.Errorf("%s: %q is not a duration such as 30m", strings.ReplaceAll(f.flag, "-", "_"), f.v)
		}
		args = append(args, "--"+f.flag+"="+f.v)
	}
	for _, f := range []struct {
		flag string
		on   bool
	}{{"worktree", q.Worktree}, {"sandbox", q.Sandbox}, {"commit", q.Commit}, {"exclusive", q.Exclusive}, {"yes-trust", q.YesTrust}} {
		if f.on {
			args = append(args, "--"+f.flag)
		}
	}
	for _, id := range q.After {
		if !state.ValidTaskID(id) {
			return nil, fmt.Errorf("after: %q is not a task id", id)
		}
		args = append(args, "--after="+id)
	}
	for _, re := range q.ApproveRule {
		if re == "" || len(re) > 1000 || !utf8.ValidString(re) || strings.ContainsRune(re, 0) {
			return nil, errors.New("approve_rule: a regular expression of at most 1000 bytes")
		}
		args = append(args, "--approve-rule="+re)
	}
	if q.MaxTurns < 0 || q.BudgetTokens < 0 || q.BudgetUSD < 0 {
		return nil, errors.New("max_turns, budget_tokens, budget_usd: not negative")
	}
	if q.MaxTurns > 0 {
		args = append(args, "--max-turns="+strconv.Itoa(q.MaxTurns))
	}
	if q.BudgetTokens > 0 {
		args = append(args, "--budget-tokens="+strconv.FormatInt(q.BudgetTokens, 10))
	}
	if q.BudgetUSD > 0 {
		args = append(args, "--budget-usd="+strconv.FormatFloat(q.BudgetUSD, 'f', -1, 64))
	}
	return append(args, "--", q.Project), nil
}

// validProject: a name (as runner project add takes) or an absolute path;
// never a relative path, which would be the server's folder.
func validProject(p string) bool {
	if p == "" || len(p) > 4096 || !utf8.ValidString(p) || strings.ContainsRune(p, 0) {
		return false
	}
	if filepath.IsAbs(p) {
		return true
	}
	return validWord(p, 100) && !strings.Contains(p, "/") && !strings.HasPrefix(p, ".")
}

// validWord: 1 to max letters, digits, '-', '_', '.', ':', '@', '/' and
// '+', not starting with '-'.
func validWord(s string, max int) bool {
	if s == "" || len(s) > max || s[0] == '-' {
		return false
	}
	for _, c := range s {
		if !(c < utf8.RuneSelf && (unicode.IsLetter(c) || unicode.IsDigit(c)) || strings.ContainsRune("-_.:@/+", c)) {
			return false
		}
	}
	return true
}

// TextRequest is POST …/send and …/msg: the text, and for msg its type.
type TextRequest struct {
	Text string `json:"text"`
	Type string `json:"type,omitempty"`
}

// CancelRequest is POST …/cancel.
type CancelRequest struct {
	Kill bool `json:"kill,omitempty"`
}

// AnswerRequest is POST …/answer: press Option only if the pane still
// shows the dialog of Digest; Op makes it once only.
type AnswerRequest struct {
	Digest string `json:"digest"`
	Option string `json:"option"`
	Op     string `json:"op"`
}

// Args returns the argv of `runner answer` for task id, or why q is
// refused.
func (q AnswerRequest) Args(id string) ([]string, error) {
	if !validToken(q.Digest, 128) {
		return nil, errors.New("digest: the dialog's digest, as GET /api/v1/tasks/{id} gives it")
	}
	if q.Option == "" || len(q.Option) > 32 || q.Option[0] == '-' || !utf8.ValidString(q.Option) {
		return nil, errors.New("option: the key of one of the dialog's options")
	}
	for _, c := range q.Option {
		if !unicode.IsPrint(c) {
			return nil, errors.New("option: the key of one of the dialog's options")
		}
	}
	if !validToken(q.Op, 64) {
		return nil, errors.New("op: an operation id, 1 to 64 letters, digits, '-' or '_'")
	}
	return []string{"answer", id, q.Option, "--digest=" + q.Digest, "--op=" + q.Op, "--by=api", "--json"}, nil
}

// validToken: 1 to max ASCII letters, digits, '-', '_' and ':'.
func validToken(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == ':') {
			return false
		}
	}
	return true
}

// taskID is the request's {id}, written as 400 when it is no task id.
func taskID(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := r.PathValue("id")
	if !state.ValidTaskID(id) {
		writeError(w, http.StatusBadRequest, "not a task id (t_ and 8 characters)")
		return "", false
	}
	return id, true
}

// run runs runner with args and stdin for r and writes its answer: the
// command's JSON with ok, or its error with Options.Status of its exit code.
func (s *Server) run(w http.ResponseWriter, r *http.Request, args []string, stdin []byte, ok int) {
	res, err := s.exec(r.Context(), args, stdin)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	s.reply(w, args, res, ok)
}

// exec runs runner within the bound of processes at once: a request waits
// for a slot at most 10s, then is 503.
func (s *Server) exec(ctx context.Context, args []string, stdin []byte) (Result, error) {
	wait := time.NewTimer(10 * time.Second)
	defer wait.Stop()
	select {
	case s.runs <- struct{}{}:
	case <-wait.C:
		return Result{}, errors.New("busy: too many requests at once, try again")
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
	defer func() { <-s.runs }()
	ctx, cancel := context.WithTimeout(ctx, runTimeout)
	defer cancel()
	return s.o.Runner.Run(ctx, args, stdin), nil
}

func (s *Server) reply(w http.ResponseWriter, args []string, res Result, ok int) {
	if res.Code == 0 && !res.Truncated && json.Valid(res.Stdout) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(ok)
		w.Write(res.Stdout)
		return
	}
	status, msg := http.StatusInternalServerError, lastError(res.Stderr)
	switch {
	case res.Code == 0:
		msg = "runner's output was not JSON"
	case s.o.Status != nil:
		status = s.o.Status(res.Code)
	}
	s.o.Log.Info("runner failed", "args", args[0], "exit", res.Code, "error", msg)
	writeJSON(w, status, apiError{Error: msg, ExitCode: &res.Code})
}

// lastError is what runner said went wrong: the "error" of its JSON error
// line, else its last line of standard error.
func lastError(stderr []byte) string {
	lines := strings.Split(strings.TrimSpace(string(stderr)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal([]byte(lines[i]), &e) == nil && e.Error != "" {
			return e.Error
		}
	}
	if last := strings.TrimSpace(lines[len(lines)-1]); last != "" {
		return strings.TrimPrefix(last, "runner: ")
	}
	return "runner failed"
}

func (s *Server) listTasks(w http.ResponseWriter, r *http.Request) {
	s.run(w, r, []string{"ps", "--all", "--json"}, nil, http.StatusOK)
}

// getTask is `runner status ID --json --screen`: the record, the pane's
// text and, when the task needs input, its dialog. A runner whose status
// does not know --screen yet gives the record alone.
func (s *Server) getTask(w http.ResponseWriter, r *http.Request) {
	id, ok := taskID(w, r)
	if !ok {
		return
	}
	s.screenMu.Lock()
	screen := !s.noScreen
	s.screenMu.Unlock()
	if screen {
		args := []string{"status", id, "--json", "--screen"}
		res, err := s.exec(r.Context(), args, nil)
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, err.Error())
			return
		}
		if res.Code == 0 || !strings.Contains(string(res.Stderr), "unknown flag: --screen") {
			s.reply(w, args, res, http.StatusOK)
			return
		}
		s.screenMu.Lock()
		s.noScreen = true
		s.screenMu.Unlock()
	}
	s.run(w, r, []string{"status", id, "--json"}, nil, http.StatusOK)
}

func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) {
	var q DispatchRequest
	if err := decode(r, &q); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	args, err := q.Args()
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.run(w, r, args, []byte(q.Task), http.StatusCreated)
}

func (s *Server) send(w http.ResponseWriter, r *http.Request) {
	id, ok := taskID(w, r)
	if !ok {
		return
	}
	var q TextRequest
	if err := decode(r, &q); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if strings.TrimSpace(q.Text) == "" || q.Type != "" {
		writeError(w, http.StatusBadRequest, "text: the prompt to send (and no type)")
		return
	}
	s.run(w, r, []string{"send", id, "--detach", "--json", "--file", "-"}, []byte(q.Text), http.StatusOK)
}

func (s *Server) msg(w http.ResponseWriter, r *http.Request) {
	id, ok := taskID(w, r)
	if !ok {
		return
	}
	var q TextRequest
	if err := decode(r, &q); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if strings.TrimSpace(q.Text) == "" {
		writeError(w, http.StatusBadRequest, "text: the message")
		return
	}
	args := []string{"msg", id, "--json", "--file", "-"}
	switch q.Type {
	case "":
	case "request", "update", "result", "dependency":
		args = append(args, "--type="+q.Type)
	default:
		writeError(w, http.StatusBadRequest, "type: request, update, result or dependency")
		return
	}
	s.run(w, r, args, []byte(q.Text), http.StatusOK)
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request) {
	id, ok := taskID(w, r)
	if !ok {
		return
	}
	var q CancelRequest
	if err := decode(r, &q); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	args := []string{"cancel", id, "--json"}
	if q.Kill {
		args = append(args, "--kill")
	}
	s.run(w, r, args, nil, http.StatusOK)
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request) {
	id, ok := taskID(w, r)
	if !ok {
		return
	}
	var q AnswerRequest
	if err := decode(r, &q); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	args, err := q.Args(id)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.run(w, r, args, nil, http.StatusOK)
}
