package agentsim

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

// The sim's Claude-style transcript (Options.TranscriptDir): a JSON line
// per prompt when its turn starts, and one per answer, with the turn's
// usage, TranscriptLate after the turn's Stop hook ran, as Claude Code
// writes its record after its hook. The hook's input then names the file
// (transcript_path) instead of carrying the usage, so runner reads the
// turn's spend as it reads Claude Code's.

// transcriptPath is the session's transcript file ("" without a
// TranscriptDir).
func (o *Options) transcriptPath() string {
	if o.TranscriptDir == "" {
		return ""
	}
	return filepath.Join(o.TranscriptDir, filepath.Base(o.SessionID)+".jsonl")
}

var transcriptMsg atomic.Int64

// transcriptLine appends one line to the session's transcript.
func (o *Options) transcriptLine(v any) error {
	path := o.transcriptPath()
	if path == "" {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("agent-sim: transcript: %w", err)
	}
	defer f.Close()
	_, err = f.Write(append(b, '\n'))
	return err
}

// stamp is now on the system's clock, as a CLI writes it.
func stamp() string { return clock.Real(clock.Now()).UTC().Format(time.RFC3339Nano) }

// transcriptPrompt records the prompt of a turn that starts.
func (o *Options) transcriptPrompt(prompt string) error {
	return o.transcriptLine(map[string]any{"type": "user", "timestamp": stamp(),
		"message": map[string]any{"role": "user", "content": prompt}})
}

// transcriptAnswer records the answer of a turn and what it used (100
// input and 10 output tokens when no usage directive said).
func (o *Options) transcriptAnswer(answer string, u *Usage) error {
	if u == nil {
		u = &Usage{InputTokens: 100, OutputTokens: 10}
	}
	return o.transcriptLine(map[string]any{"type": "assistant", "timestamp": stamp(),
		"message": map[string]any{"id": fmt.Sprintf("msg_sim%d", transcriptMsg.Add(1)),
			"content":     []map[string]string{{"type": "text", "text": answer}},
			"stop_reason": "end_turn",
			"usage": map[string]int64{"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens,
				"cache_read_input_tokens": u.CacheReadTokens}}})
}
