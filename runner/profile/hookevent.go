package profile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/untrusted"
)

// HookEvent is one line of a task's events file, read: either the runner's
// own record ({"time":…,"event":…,"data":PAYLOAD}, written by `runner
// hook`) or an agent's payload appended as is by the profile's appender
// (Claude Code's, Qwen Code's and Gemini CLI's hook input, Codex's notify
// JSON, the OpenCode plugin's line).
type HookEvent struct {
	// Time is when `runner hook` wrote the line; zero for a payload
	// appended as is (its time is when the supervisor read it).
	Time time.Time
	// Name is the event's name: "Stop", "SubagentStop", "AfterAgent",
	// Codex's "agent-turn-complete", ….
	Name string
	// Stop: the end of a top-level turn of the agent (not a sub-agent's).
	Stop bool
	// Session is the agent's own session id (session_id, thread-id).
	Session string
	// Answer is the agent's final message of the turn, when the payload
	// carries it (HasAnswer).
	Answer    string
	HasAnswer bool
	// Prompts are the user prompts of the turn, when the payload names
	// them (Codex's input-messages, Gemini's prompt, the sim's
	// last_prompt): what tells the delivered turn from a side turn.
	Prompts []string
	// AnswerFile is the agent's session record that holds the turn's
	// answer when the payload has none (GitHub Copilot CLI writes it
	// after its agentStop hook): see LateAnswer.
	AnswerFile string
	// Usage is what the turn used, when the payload carries it (a
	// "usage" object: the sim's, the OpenCode plugin's, the pi
	// extension's); Transcript is the session file the payload names
	// (transcript_path), where TurnUsage reads it for the others.
	Usage      *Usage
	Transcript string
	// Turn is the agent's own id of the turn, when the payload names it
	// (Codex's turn-id).
	Turn string
	// Error is the error the turn ended on, when the payload says (the pi
	// extension's "error" with stop_reason "error").
	Error string
}

// LateAnswer reads the answer to the prompt whose first line holds sig
// ("" for the last turn's) from ev.AnswerFile: ok false when it is not
// there yet, or there is no such file.
func (ev HookEvent) LateAnswer(sig string) (string, bool) {
	if ev.AnswerFile == "" {
		return "", false
	}
	return copilotAnswer(ev.AnswerFile, sig)
}

// ParseHookEvent reads one events-file line; ok is false for a line that
// is not a JSON object.
func ParseHookEvent(line string) (ev HookEvent, ok bool) {
	var outer map[string]json.RawMessage
	if json.Unmarshal([]byte(line), &outer) != nil || outer == nil {
		return ev, false
	}
	payload := outer
	if raw, wrapped := outer["event"]; wrapped {
		// The runner's own record.
		_ = json.Unmarshal(outer["time"], &ev.Time)
		_ = json.Unmarshal(raw, &ev.Name)
		var inner map[string]json.RawMessage
		if d, has := outer["data"]; has && json.Unmarshal(d, &inner) == nil && inner != nil {
			payload = inner
		} else {
			payload = map[string]json.RawMessage{}
		}
	}
	str := func(keys ...string) (string, bool) {
		for _, k := range keys {
			if raw, has := payload[k]; has {
				var s string
				if json.Unmarshal(raw, &s) == nil {
					return s, true
				}
			}
		}
		return "", false
	}
	if n, has := str("hook_event_name", "type"); has && (ev.Name == "" || ev.Name == "Stop") {
		ev.Name = n
	}
	ev.Session, _ = str("session_id", "thread-id", "thread_id", "sessionID", "sessionId")
	if !untrusted.Name(ev.Session) {
		ev.Session = "" // it names files (a session's chat, a rollout): never a path out of their folder
	}
	ev.Answer, ev.HasAnswer = str("last_assistant_message", "last-assistant-message", "prompt_response")
	if p, has := str("last_prompt", "prompt"); has {
		ev.Prompts = append(ev.Prompts, p)
	}
	if raw, has := payload["input-messages"]; has {
		var msgs []string
		if json.Unmarshal(raw, &msgs) == nil {
			ev.Prompts = append(ev.Prompts, msgs...)
		}
	}
	if raw, has := payload["usage"]; has {
		ev.Usage = usageFromPayload(raw)
	}
	ev.Transcript, _ = str("transcript_path")
	ev.Turn, _ = str("turn-id", "turn_id")
	ev.Error, _ = str("error")
	if tp, has := str("transcript_path"); has && ev.Name == "AfterAgent" {
		// Gemini CLI 0.61's prompt_response repeats the streamed chunks
		// after the answer; the chat file it names has the answer whole.
		prompt, _ := str("prompt")
		if a, ok := geminiChatAnswer(tp, prompt); ok {
			ev.Answer, ev.HasAnswer = a, true
		}
	}
	if tp, has := str("transcriptPath"); has && !ev.HasAnswer {
		// GitHub Copilot CLI's agentStop names its session's events file,
		// which will have the turn's answer (written after the hook, a turn
		// late at times); the payload has none. Read by the prompt: see
		// LateAnswer.
		ev.AnswerFile = tp
	}
	parent, _ := str("parent_id", "agent_id")
	switch {
	case parent != "":
		ev.Stop = false
	case strings.EqualFold(ev.Name, "Stop"), ev.Name == "AfterAgent", ev.Name == "agent-turn-complete":
		ev.Stop = true
	}
	return ev, true
}

// TurnMatch says which turn-end event belongs to the turn the runner
// delivered: a turn of the same agent session, begun after the delivery,
// about the delivered prompt. It is set by the supervisor as it delivers.
type TurnMatch struct {
	// Since is when the delivery began: an event the runner stamped
	// earlier belongs to an earlier turn.
	Since time.Time
	// EventsFrom is the events file's size when the delivery began; -1
	// when not known (a supervisor that did not deliver: then a payload
	// appended as is that is in the file before the wait starts is not
	// taken, having no time to judge it by).
	EventsFrom int64
	// Signature is a piece of the delivered prompt's first line: an event
	// that names its turn's prompts must name it (not a side turn such as
	// Codex's title turn). Empty: not checked.
	Signature string
	// Session is the agent's session id known from an earlier turn: an
	// event from another session is not this task's turn. Empty: any.
	Session string
}

// Accepts reports whether ev ends the matched turn, and if not, why.
func (m TurnMatch) Accepts(ev HookEvent) (bool, string) {
	if !ev.Stop {
		return false, "not a turn-end event (" + ev.Name + ")"
	}
	if !ev.Time.IsZero() && !m.Since.IsZero() && ev.Time.Before(m.Since) {
		return false, "stale: written before the delivery"
	}
	if m.Session != "" && ev.Session != "" && ev.Session != m.Session {
		return false, "another agent session (" + ev.Session + ")"
	}
	if m.Signature != "" && len(ev.Prompts) > 0 {
		sig := normalizeSpace(m.Signature)
		for _, p := range ev.Prompts {
			if strings.Contains(normalizeSpace(p), sig) {
				return true, ""
			}
		}
		return false, "a side turn (its prompt is not the delivered one)"
	}
	return true, ""
}

// normalizeSpace folds every run of white space (a pasted CR, a tab) to
// one space.
func normalizeSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// geminiChatAnswer reads the model's answer to prompt from a Gemini CLI chat
// file (JSON lines; a "user" record, then the "gemini" records of its turn):
// the text of the last "gemini" record after the last "user" record, which
// must be prompt's. ok is false when the file does not have that turn's
// answer yet (then the payload's prompt_response stands). Only the file's
// last MiB is read.
func geminiChatAnswer(path, prompt string) (answer string, ok bool) {
	sc, done, err := tailLines(path, 1<<20)
	if err != nil {
		return "", false
	}
	defer done()
	userSeen, userMatches := false, false
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		var rec struct {
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
		}
		if len(line) == 0 || json.Unmarshal(line, &rec) != nil {
			continue // a partial first line, or a metadata record
		}
		text := chatText(rec.Content)
		switch rec.Type {
		case "user":
			userSeen = true
			userMatches = prompt == "" || strings.Contains(text, strings.TrimSpace(prompt))
			answer, ok = "", false
		case "gemini":
			if userSeen && userMatches && strings.TrimSpace(text) != "" {
				answer, ok = text, true
			}
		}
	}
	return strings.TrimSpace(answer), ok
}

// chatText is a chat record's content: a string, or parts with text.
func chatText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

// copilotAnswer is the last answer in a GitHub Copilot CLI session's
// events file (events.jsonl: one {"type": …, "data": …} per line; an
// answer is an "assistant.message" whose data.content is not empty), to
// the last prompt, or with sig to the last prompt that holds sig (Copilot
// writes the file a turn late at times: an answer to another prompt is
// not this turn's). ok is false when there is none. Only the file's last
// MiB is read.
func copilotAnswer(path, sig string) (answer string, ok bool) {
	sc, done, err := tailLines(path, 1<<20)
	if err != nil {
		return "", false
	}
	defer done()
	ours := sig == ""
	for sc.Scan() {
		var rec struct {
			Type string `json:"type"`
			Data struct {
				Content string `json:"content"`
			} `json:"data"`
		}
		if json.Unmarshal(bytes.TrimSpace(sc.Bytes()), &rec) != nil {
			continue // a partial first line
		}
		switch rec.Type {
		case "user.message":
			// A new turn: its answer follows (if it is the one asked for).
			ours = sig == "" || strings.Contains(normalizeSpace(rec.Data.Content), normalizeSpace(sig))
			if ours {
				answer, ok = "", false
			}
		case "assistant.message":
			if c := strings.TrimSpace(rec.Data.Content); c != "" && ours {
				answer, ok = c, true
			}
		}
	}
	return answer, ok
}

// tailLines scans the lines of the last window bytes of the file at path
// (the first may be partial); done closes the file.
func tailLines(path string, window int64) (sc *bufio.Scanner, done func(), err error) {
	f, err := untrusted.Open(path)
	if err != nil {
		return nil, nil, err
	}
	if st, err := f.Stat(); err == nil && st.Size() > window {
		if _, err := f.Seek(st.Size()-window, io.SeekStart); err != nil {
			f.Close()
			return nil, nil, err
		}
	}
	sc = bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), int(window))
	return sc, func() { f.Close() }, nil
}
