package ask

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/messaging"
	"github.com/runner-cli/runner/runner/profile"

	"github.com/runner-cli/runner/runner/fault"

	"github.com/runner-cli/runner/state"
)

// Ask targets other than task ids.
const (
	Siblings = messaging.AskSiblings // the calling task's siblings (same parent)
	All      = messaging.AskAll      // every active task except the caller
)

// Ask defaults and bounds.
const (
	// DefaultTimeout bounds one shadow when Request.Timeout is 0.
	DefaultTimeout = 2 * time.Minute
	// DefaultParallel is how many shadows run at once when
	// Request.Parallel is 0.
	DefaultParallel = 8
	// ContextMax bounds the prompt a shadow gets, in bytes.
	ContextMax = 8 << 10
	// askOutputMax bounds what is kept of a shadow's stdout (its answer);
	// askStderrMax of its stderr (for the error message).
	askOutputMax = 64 << 10
	askStderrMax = 2 << 10
)

// Modes of an Answer.
const (
	ModeShadow  = "shadow"  // a headless copy of the agent answered
	ModeMessage = "message" // no headless mode: the question was posted as a message
)

// Message types ask posts (see `runner msg --type`).
const (
	MessageRequest = "request" // the question, to a target without a headless mode
	MessageFYI     = "update"  // "you were asked …; your shadow answered …"
)

// ErrFailed is wrapped by Ask's error when a shadow failed or a
// question could not be posted (exit 1).
var ErrFailed = errors.New("a shadow failed")

// ErrTimeout is wrapped by Ask's error when a shadow ran out of time and
// none failed (exit 3).
var ErrTimeout = errors.New("a shadow timed out")

// PostFunc posts a message of type typ to a task's queue; it is how Ask
// sends the FYI after a shadow answer and the question to a target without
// a headless mode.
type PostFunc func(ctx context.Context, to *state.Task, typ, text string) error

// Request is one `runner ask`.
type Request struct {
	// Targets are task ids (or unique prefixes), Siblings or All.
	Targets []string
	// Question is what the shadows answer.
	Question string
	// Caller is the asking task's id; empty means the task this process
	// runs under (RUNNER_TASK_ID, or its pane's process ancestry), if any.
	Caller string
	// Timeout bounds each shadow; 0 means DefaultTimeout.
	Timeout time.Duration
	// Parallel is how many shadows run at once; 0 means DefaultParallel.
	Parallel int
	// Post posts messages between tasks; required.
	Post PostFunc
	// OnAnswer, if set, gets each answer as it arrives, one call at a time.
	OnAnswer func(Answer)
	// Quiet asks shadows only: no FYI is posted after an answer, and a
	// target without a headless mode gets no message but an Error (a
	// group's vote: the candidates have ended). PromptFor, when set, is
	// the whole prompt of target t's shadow (the caller quotes what it
	// shows), in place of Prompt's.
	Quiet     bool
	PromptFor func(t *state.Task) string
}

// Answer is the outcome for one target, as `runner ask --json` prints
// it (one object per line).
type Answer struct {
	// Task and Agent name the target.
	Task  string `json:"task"`
	Agent string `json:"agent"`
	// Mode is ModeShadow or ModeMessage.
	Mode string `json:"mode"`
	// Answer is the shadow's standard output, trimmed ("" in message mode).
	Answer string `json:"answer"`
	// Error says why there is no answer ("" when it answered, or when
	// the question was posted in message mode).
	Error string `json:"error"`
	// TimedOut is set when the shadow was killed at the timeout.
	TimedOut bool `json:"timed_out"`
	// ElapsedMS is how long the shadow (or the post) took.
	ElapsedMS int64 `json:"elapsed_ms"`
	// Exit is the shadow's exit status; nil when it did not exit by
	// itself (killed at the timeout, not started, message mode).
	Exit *int `json:"exit"`
	// FYIError says why the FYI message to the target was not posted
	// after an answer ("" when it was, or when there was no answer).
	FYIError string `json:"fyi_error"`
}

// OK reports whether the target answered (shadow) or got the question
// (message mode).
func (a Answer) OK() bool { return a.Error == "" }

// Ask resolves the targets and, for each in parallel, runs its profile's
// headless command in its directory with a bounded context (Prompt),
// killing the process group at the timeout. A target answered gets an FYI
// message; a target whose profile has no headless mode gets the question as
// a message instead. The targets' panes are never touched. Answers are
// returned in target order and passed to OnAnswer as they arrive.
//
// Bad targets are an ErrUsage error and nothing runs. Otherwise the error
// wraps ErrFailed if a target failed, else ErrTimeout if one timed
// out, else it is nil; the context's error when it ends first.
func Run(ctx context.Context, d Deps, req Request) ([]Answer, error) {
	if req.Post == nil && !req.Quiet {
		return nil, errors.New("ask: no Post function (a bug in the caller)")
	}
	if strings.TrimSpace(req.Question) == "" {
		return nil, fault.Usagef("ask: empty question")
	}
	st, err := d.Reconcile(ctx)
	if err != nil {
		return nil, err
	}
	if req.Caller == "" {
		req.Caller = d.CallerTask(ctx, st, nil)
	}
	targets, err := messaging.AskTargets(st, req.Caller, req.Targets)
	if err != nil {
		return nil, err
	}
	if err := checkReach(d, st, req.Caller, targets); err != nil {
		return nil, err
	}
	profs := make([]*profile.Profile, len(targets))
	for i, t := range targets {
		p, err := profile.FindProfile(d.Profiles, t.Agent)
		if err != nil {
			return nil, fault.Usagef("task %s: its agent %q has no profile (see 'runner agents')", t.ID, t.Agent)
		}
		profs[i] = p
	}
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	parallel := req.Parallel
	if parallel <= 0 {
		parallel = DefaultParallel
	}
	asker := "the user"
	if req.Caller != "" {
		asker = "task " + req.Caller
	}

	type result struct {
		i int
		a Answer
	}
	results := make(chan result)
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
				results <- result{i, Answer{Task: t.ID, Agent: t.Agent, Mode: modeOf(profs[i]), Error: "interrupted before it started"}}
				return
			}
			results <- result{i, askOne(ctx, d, t, profs[i], req, asker, timeout)}
		}()
	}
	go func() { wg.Wait(); close(results) }()

	out := make([]Answer, len(targets))
	for r := range results {
		out[r.i] = r.a
		if req.OnAnswer != nil {
			req.OnAnswer(r.a)
		}
	}
	if err := ctx.Err(); err != nil {
		return out, err
	}
	return out, askOutcome(out)
}

func modeOf(p *profile.Profile) string {
	if len(p.Headless) == 0 {
		return ModeMessage
	}
	return ModeShadow
}

// askOutcome is Ask's error for a set of answers: a failure beats a
// timeout (both mean some target has no answer; a failure needs a look).
func askOutcome(as []Answer) error {
	var failed, timedOut []string
	for _, a := range as {
		switch {
		case a.TimedOut:
			timedOut = append(timedOut, a.Task)
		case !a.OK():
			failed = append(failed, a.Task)
		}
	}
	switch {
	case len(failed) > 0:
		return fmt.Errorf("ask: no answer from %s: %w", strings.Join(failed, ", "), ErrFailed)
	case len(timedOut) > 0:
		return fmt.Errorf("ask: no answer in time from %s: %w", strings.Join(timedOut, ", "), ErrTimeout)
	}
	return nil
}

// askOne asks one target: its shadow, then the FYI; or, without a headless
// mode, the question as a message.
func askOne(ctx context.Context, d Deps, t *state.Task, prof *profile.Profile, req Request, asker string, timeout time.Duration) (a Answer) {
	a = Answer{Task: t.ID, Agent: t.Agent, Mode: modeOf(prof)}
	start := clock.Now()
	defer func() { a.ElapsedMS = clock.Since(start).Milliseconds() }()
	if a.Mode == ModeMessage && req.Quiet {
		a.Error = fmt.Sprintf("agent %s has no headless mode to ask", t.Agent)
		return a
	}
	if a.Mode == ModeMessage {
		text := fmt.Sprintf("Question from %s (your agent %s has no headless mode to answer it for you):\n%s", asker, t.Agent, req.Question)
		if err := req.Post(ctx, t, MessageRequest, text); err != nil {
			a.Error = fmt.Sprintf("post the question to %s: %v", t.ID, err)
		}
		return a
	}
	whole := *t // the shadow gets the task's whole text (Prompt clips it)
	if text, err := d.Store.TaskText(t); err == nil {
		whole.Text = text
	}
	var prompt string
	if req.PromptFor != nil {
		prompt = req.PromptFor(&whole)
	} else {
		prompt = Prompt(&whole, readTranscriptTail(t.Transcript), asker, req.Question)
	}
	res := runShadow(ctx, d, t, prof, prompt, timeout)
	a.Answer, a.Exit, a.TimedOut = res.answer, res.exit, res.timedOut
	switch {
	case res.err != nil:
		a.Error = res.err.Error()
		return a
	case a.Answer == "":
		a.Error = fmt.Sprintf("the shadow of %s exited 0 but printed no answer%s", t.ID, stderrNote(res.stderr))
		return a
	}
	if req.Quiet {
		return a
	}
	fyi := fmt.Sprintf("FYI, no reply needed: while you were busy, %s asked you:\n%s\n\nYour shadow (a headless copy of you, given your task and recent output) answered:\n%s",
		asker, textutil.ClipBytes(req.Question, 1500), textutil.ClipBytes(a.Answer, 3000))
	if err := req.Post(ctx, t, MessageFYI, fyi); err != nil {
		a.FYIError = fmt.Sprintf("post the FYI to %s: %v", t.ID, err)
	}
	return a
}

// checkReach refuses, for a caller confined to its tree of tasks
// (Deps.TreeOnly), a target outside that tree: nothing runs.
func checkReach(d Deps, st *state.State, caller string, targets []*state.Task) error {
	if !d.TreeOnly || caller == "" {
		return nil
	}
	for _, t := range targets {
		if _, out := messaging.SplitTree(st, caller, []string{t.ID}); len(out) > 0 {
			return fault.Usagef("ask: %s", messaging.OutsideTree(caller, t.ID))
		}
	}
	return nil
}
