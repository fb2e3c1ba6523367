package spend

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/runner-cli/runner/internal/tailfile"
	"github.com/runner-cli/runner/runner/profile"
)

// clineSession is the part of a Cline CLI session's messages file
// (~/.cline/data/sessions/<id>/<id>.messages.json, one JSON document
// rewritten as the session goes; 3.0.65) that tells of turns: its
// messages in order, a user's prompt or a tool's results ("user"), the
// model's answers and tool calls ("assistant", with the call's "metrics").
type clineSession struct {
	Messages []struct {
		Role    string `json:"role"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Metrics *struct {
			Input      int64 `json:"inputTokens"`
			Output     int64 `json:"outputTokens"`
			CacheRead  int64 `json:"cacheReadTokens"`
			CacheWrite int64 `json:"cacheWriteTokens"`
		} `json:"metrics"`
	} `json:"messages"`
}

// clineSessionMessages finds the messages file of the Cline CLI session
// whose latest prompt holds sig, under $CLINE_DATA_DIR (else
// $CLINE_DIR/data, else ~/.cline/data): Cline runs no hook of runner's, so
// no event names it. "" when there is none (or sig is empty).
func clineSessionMessages(env func(string) string, sig string) string {
	data := env("CLINE_DATA_DIR")
	if data == "" {
		if dir := cliHome(env, "CLINE_DIR", ".cline"); dir != "" {
			data = filepath.Join(dir, "data")
		}
	}
	if data == "" || sig == "" {
		return ""
	}
	return recentWith(filepath.Join(data, "sessions", "*", "*.messages.json"), func(path string) bool {
		var s clineSession
		last := ""
		if readCline(path, &s) {
			for _, m := range s.Messages {
				if t, prompt := clinePrompt(m.Role, m.Content); prompt {
					last = t
				}
			}
		}
		return last != "" && promptMatches(last, sig)
	})
}

// readCline decodes the messages file at path into s: false when it
// cannot be read whole (larger than spendWindow) or decoded.
func readCline(path string, s *clineSession) bool {
	b, err := tailfile.Bytes(path, spendWindow)
	return err == nil && len(b) < spendWindow && json.Unmarshal(b, s) == nil
}

// clinePrompt is a message's text and whether it is a user's prompt (a
// user message with text; a tool's results have none).
func clinePrompt(role string, content []struct {
	Type string `json:"type"`
	Text string `json:"text"`
}) (text string, prompt bool) {
	if role != "user" {
		return "", false
	}
	for _, c := range content {
		if c.Type == "text" {
			text += c.Text
		}
	}
	return text, text != ""
}

// clineTurn reads the turn whose prompt holds sig from the messages file
// at path: the metrics of each assistant message after the last prompt
// that holds it, summed (inputTokens counts the cache's reads and writes,
// which are taken out); the turn has ended once its last message is an
// answer that calls no tool.
func clineTurn(path, sig string) turnRecord {
	var s clineSession
	if path == "" || !readCline(path, &s) {
		return turnRecord{}
	}
	var out turnRecord
	started := false
	for _, m := range s.Messages {
		if text, prompt := clinePrompt(m.Role, m.Content); prompt {
			if promptMatches(text, sig) {
				out, started = turnRecord{}, true
			}
			continue
		}
		if !started || m.Role != "assistant" {
			if m.Role == "user" {
				out.ended = false // a tool's results: the model is asked again
			}
			continue
		}
		if x := m.Metrics; x != nil {
			cached := x.CacheRead + x.CacheWrite
			out.usage = plus(out.usage, profile.Usage{Input: max(0, x.Input-cached), Output: x.Output, Cached: cached})
			out.ok = true
		}
		text, calls := "", false
		for _, c := range m.Content {
			switch c.Type {
			case "text":
				text += c.Text
			case "tool_use", "tool-call", "tool_call":
				calls = true
			}
		}
		if out.ended = !calls && text != ""; out.ended {
			out.last = text
		}
	}
	return out
}

// TurnAnswer is the answer of the turn whose prompt holds sig, read from
// the CLI's record where no hook names it (Cline's messages file, found by
// the prompt): ok false for another CLI, when there is no such record, or
// when the turn has not ended there yet (the screen's answer is taken
// then).
func TurnAnswer(p *profile.Profile, sig string, env func(string) string) (string, bool) {
	if p == nil || p.Spend != profile.SpendCline {
		return "", false
	}
	t := clineTurn(clineSessionMessages(env, sig), sig)
	answer := strings.TrimSpace(t.last)
	return answer, t.ended && answer != ""
}
