package profile

import (
	"encoding/json"
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
	// after its agentStop hook): runner/spend's LateAnswer reads it.
	AnswerFile string
	// Usage is what the turn used, when the payload carries it (a
	// "usage" object: the sim's, the OpenCode plugin's, the pi
	// extension's); Transcript is the session file the payload names
	// (transcript_path), where runner/spend's TurnUsage reads it for the
	// others.
	Usage      *Usage
	Transcript string
	// Turn is the agent's own id of the turn, when the payload names it
	// (Codex's turn-id).
	Turn string
	// Error is the error the turn ended on, when the payload says (the pi
	// extension's "error" with stop_reason "error").
	Error string
}

// ParseHookEvent reads one events-file line; ok is false for a line that
// is not a JSON object. It reads no other file: runner/spend's
// ReadHookEvent adds the answer a payload does not have whole (Gemini
// CLI's, from its chat file).
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
	if tp, has := str("transcriptPath"); has && !ev.HasAnswer {
		// GitHub Copilot CLI's agentStop names its session's events file,
		// which will have the turn's answer (written after the hook, a turn
		// late at times); the payload has none. Read by the prompt: see
		// runner/spend's LateAnswer.
		ev.AnswerFile = tp
	}
	if !ev.HasAnswer && ev.AnswerFile == "" && IsDroidSession(ev.Transcript) {
		// Factory Droid's Stop names its session's .jsonl, which has the
		// turn's answer (its TUI draws it after the hook ran); the payload
		// has none. Read by the prompt: runner/spend's LateAnswer.
		ev.AnswerFile = ev.Transcript
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

// IsDroidSession says path is a Factory Droid session record
// (~/.factory/sessions/<folder>/<session>.jsonl), as its hooks'
// transcript_path names it.
func IsDroidSession(path string) bool {
	return strings.Contains(path, "/.factory/sessions/") && strings.HasSuffix(path, ".jsonl")
}
