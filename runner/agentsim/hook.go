package agentsim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/subproc"
)

// hookTimeout bounds one run of the --hook command.
const hookTimeout = 30 * time.Second

// hookInput is the JSON object the hook reads on stdin, shaped like Claude
// Code's Stop hook input.
type hookInput struct {
	HookEventName        string `json:"hook_event_name"`
	CWD                  string `json:"cwd"`
	SessionID            string `json:"session_id"`
	LastPrompt           string `json:"last_prompt"`
	LastAssistantMessage string `json:"last_assistant_message"`
	// AgentID names the sub-agent of a SubagentStop event.
	AgentID string `json:"agent_id,omitempty"`
	// Usage is what the turn used, after a turn with usage directives.
	Usage *Usage `json:"usage,omitempty"`
	// TranscriptPath names the session's transcript (Options.TranscriptDir).
	TranscriptPath string `json:"transcript_path,omitempty"`
}

// Usage is a turn's spend as the sim reports it in its Stop hook's input
// (Anthropic's names, and the cost): the sum of the turn's usage
// directives.
type Usage struct {
	InputTokens     int64    `json:"input_tokens"`
	OutputTokens    int64    `json:"output_tokens"`
	CacheReadTokens int64    `json:"cache_read_input_tokens"`
	CostUSD         *float64 `json:"cost_usd,omitempty"`
}

// add adds a usage directive's numbers.
func (u *Usage) add(d directive) {
	u.InputTokens += d.usage[0]
	u.OutputTokens += d.usage[1]
	u.CacheReadTokens += d.usage[2]
	if d.hasCost {
		c := d.cost
		if u.CostUSD != nil {
			c += *u.CostUSD
		}
		u.CostUSD = &c
	}
}

// runHook runs the hook argv with the sim's dir and environment and the
// event (Stop, SubagentStop) on stdin. Its output is discarded; a failure returns a one-line error
// with the last line of its stderr.
func runHook(ctx context.Context, o *Options, prompt, event, answer string, usage *Usage) error {
	if len(o.Hook) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, hookTimeout)
	defer cancel()
	hi := hookInput{HookEventName: event, CWD: o.Dir, SessionID: o.SessionID, LastPrompt: prompt, LastAssistantMessage: answer, Usage: usage}
	if tp := o.transcriptPath(); tp != "" && event == "Stop" {
		// As Claude Code: the hook names the transcript, which has the
		// turn's end (and its usage) only a moment after the hook ran.
		hi.Usage, hi.TranscriptPath = nil, tp
		defer func() {
			go func() {
				time.Sleep(o.TranscriptLate)
				_ = o.transcriptAnswer(answer, usage)
			}()
		}()
	}
	if event == "SubagentStop" {
		hi.AgentID = "sim-subagent"
	}
	in, err := json.Marshal(hi)
	if err != nil {
		return fmt.Errorf("hook %s: encode input: %w", o.Hook[0], err)
	}
	cmd := subproc.Command(ctx, o.Hook[0], o.Hook[1:]...)
	cmd.Dir = o.Dir
	cmd.Env = o.Env
	cmd.Stdin = bytes.NewReader(in)
	cmd.WaitDelay = time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:]
		}
		if msg != "" {
			return fmt.Errorf("hook %s: %v: %s", o.Hook[0], err, msg)
		}
		return fmt.Errorf("hook %s: %w", o.Hook[0], err)
	}
	return nil
}

// appendRecord appends {"prompt": prompt} as one JSON line to path and
// fsyncs it. JSON cannot hold invalid UTF-8: such bytes are recorded as
// U+FFFD.
func appendRecord(path, prompt string) error {
	if path == "" {
		return nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(struct {
		Prompt string `json:"prompt"`
	}{prompt}); err != nil {
		return fmt.Errorf("record prompt: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("record prompt: %w", err)
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return fmt.Errorf("record prompt to %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("record prompt to %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("record prompt to %s: %w", path, err)
	}
	return nil
}
