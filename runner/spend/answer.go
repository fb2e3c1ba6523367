// A turn's answer from the CLI's record, where the hook's payload does not
// have it whole.

package spend

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/runner-cli/runner/internal/tailfile"
	"github.com/runner-cli/runner/runner/profile"
)

// answerWindow bounds how much of a record is read for an answer: its
// last MiB.
const answerWindow = 1 << 20

// ReadHookEvent is profile.ParseHookEvent with the answer read from the
// record where the payload's is not whole: Gemini CLI 0.61's AfterAgent
// prompt_response repeats the streamed chunks after the answer, and the
// chat file it names (transcript_path) has the answer whole.
func ReadHookEvent(line string) (profile.HookEvent, bool) {
	ev, ok := profile.ParseHookEvent(line)
	if !ok || ev.Name != "AfterAgent" || ev.Transcript == "" {
		return ev, ok
	}
	prompt := ""
	if len(ev.Prompts) > 0 {
		prompt = ev.Prompts[0] // the payload's "prompt"
	}
	if a, found := geminiChatAnswer(ev.Transcript, prompt); found {
		ev.Answer, ev.HasAnswer, ev.AnswerFile = a, true, ""
	}
	return ev, true
}

// LateAnswer reads the answer to the prompt whose first line holds sig
// ("" for the last turn's) from ev.AnswerFile (GitHub Copilot CLI writes
// it after its agentStop hook, a turn late at times): ok false when it is
// not there yet, or there is no such file.
func LateAnswer(ev profile.HookEvent, sig string) (string, bool) {
	if ev.AnswerFile == "" {
		return "", false
	}
	if profile.IsDroidSession(ev.AnswerFile) {
		return droidAnswer(ev.AnswerFile, sig)
	}
	return copilotAnswer(ev.AnswerFile, sig)
}

// droidAnswer reads the answer to the prompt whose first line holds sig
// from a Factory Droid session record: see droidTurn.
func droidAnswer(path, sig string) (answer string, ok bool) {
	t := droidTurn(path, sig)
	return t.answer, t.answer != ""
}

// LateFailure reads why the turn of the prompt whose first line holds sig
// failed from ev.AnswerFile, where the agent records it (Factory Droid:
// its provider unreachable, an API error such as a 429 it gave up on, its
// Stop hook run all the same): ended is false while the record does not
// have the turn's end yet (or ev names no such record), failure is ""
// for a turn that completed.
func LateFailure(ev profile.HookEvent, sig string) (failure string, ended bool) {
	if ev.AnswerFile == "" || !profile.IsDroidSession(ev.AnswerFile) {
		return "", false
	}
	t := droidTurn(ev.AnswerFile, sig)
	return t.failure, t.ended
}

// droidRecordTurn is a turn of a Droid session record.
type droidRecordTurn struct {
	answer  string // the model's last text after its last tool call
	failure string // the error the turn ended on ("" when it completed)
	ended   bool   // its agent_turn_outcome record is there
}

// droidTurn reads the turn of the prompt whose first line holds sig (""
// for the last) from a Factory Droid session record (JSON lines; "message"
// records with Anthropic's roles and content blocks, an error the user
// sees as a "user_only" message, then an "agent_turn_outcome" record):
// its answer is the text of the last assistant message that calls no tool,
// once the outcome follows it; its failure the error's text when the
// outcome is not "completed".
func droidTurn(path, sig string) droidRecordTurn {
	var out, cur droidRecordTurn
	ours := sig == ""
	_ = tailfile.Lines(path, answerWindow, func(l tailfile.Line) bool {
		var rec droidRecord
		if json.Unmarshal(bytes.TrimSpace(l.Text), &rec) != nil {
			return true // a partial first line
		}
		switch {
		case rec.Type == "agent_turn_outcome":
			if ours {
				cur.ended = true
				if rec.Reason == "completed" {
					cur.failure = ""
				} else if cur.failure == "" {
					cur.failure = rec.Reason
				}
				out = cur
			}
		case rec.Type != "message" || strings.HasPrefix(rec.ID, "context-"):
			// The context it adds before a prompt, or another record.
		default:
			text, tool := rec.text()
			switch {
			case rec.Message.Role == "user" && rec.Message.Visibility == "user_only":
				cur.failure = text // an error shown to the user
			case rec.Message.Role == "user" && !tool && text != "":
				if ours = promptMatches(text, sig); ours {
					cur, out = droidRecordTurn{}, droidRecordTurn{}
				}
			case rec.Message.Role == "assistant" && tool:
				cur.answer = "" // the turn goes on after the tool
			case rec.Message.Role == "assistant" && text != "":
				cur.answer = text
			}
		}
		return true
	})
	if !out.ended {
		out.answer = ""
	}
	return out
}

// droidRecord is a line of a Droid session record.
type droidRecord struct {
	Type    string `json:"type"`
	ID      string `json:"id"`
	Reason  string `json:"reason"`
	Message struct {
		Role       string `json:"role"`
		Visibility string `json:"visibility"`
		Content    []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"message"`
}

// text is a message's text, and whether it calls a tool or carries a
// tool's result.
func (r droidRecord) text() (string, bool) {
	var words []string
	tool := false
	for _, c := range r.Message.Content {
		switch c.Type {
		case "text":
			words = append(words, c.Text)
		case "tool_use", "tool_result":
			tool = true
		}
	}
	return strings.TrimSpace(strings.Join(words, "\n")), tool
}

// geminiChatAnswer reads the model's answer to prompt from a Gemini CLI chat
// file (JSON lines; a "user" record, then the "gemini" records of its turn,
// and the "user" records of its tools' results): the text of the last
// "gemini" record that calls no tool after the last prompt, which must be
// prompt's. ok is false when the file does not have that turn's
// answer yet (then the payload's prompt_response stands).
func geminiChatAnswer(path, prompt string) (answer string, ok bool) {
	userSeen, userMatches := false, false
	_ = tailfile.Lines(path, answerWindow, func(l tailfile.Line) bool {
		var rec chatRecord
		line := bytes.TrimSpace(l.Text)
		if len(line) == 0 || json.Unmarshal(line, &rec) != nil {
			return true // a partial first line, or a metadata record
		}
		text := chatText(rec.Content)
		switch {
		case rec.Type == "user" && rec.toolResult():
			// A tool's result: the turn goes on.
		case rec.Type == "user":
			userSeen = true
			userMatches = prompt == "" || strings.Contains(text, strings.TrimSpace(prompt))
			answer, ok = "", false
		case rec.Type == "gemini" && rec.callsTool():
			// A tool call, with any text it came with: the answer comes
			// after the tool ran.
			answer, ok = "", false
		case rec.Type == "gemini":
			if userSeen && userMatches && strings.TrimSpace(text) != "" {
				answer, ok = text, true
			}
		}
		return true
	})
	return strings.TrimSpace(answer), ok
}

// copilotAnswer is the last answer in a GitHub Copilot CLI session's
// events file (events.jsonl: one {"type": …, "data": …} per line; an
// answer is an "assistant.message" whose data.content is not empty and
// that calls no tool: a model response with a tool call may carry text,
// "I'll create the file.", which is not the turn's answer, the one after
// the tool ran is), to the last prompt, or with sig to the last prompt
// that holds sig (Copilot writes the file a turn late at times: an answer
// to another prompt is not this turn's). ok is false when there is none.
func copilotAnswer(path, sig string) (answer string, ok bool) {
	ours := sig == ""
	_ = tailfile.Lines(path, answerWindow, func(l tailfile.Line) bool {
		var rec struct {
			Type string         `json:"type"`
			Data copilotMessage `json:"data"`
		}
		if json.Unmarshal(bytes.TrimSpace(l.Text), &rec) != nil {
			return true // a partial first line
		}
		switch rec.Type {
		case "user.message":
			// A new turn: its answer follows (if it is the one asked for).
			if ours = promptMatches(rec.Data.Content, sig); ours {
				answer, ok = "", false
			}
		case "assistant.message":
			switch c := strings.TrimSpace(rec.Data.Content); {
			case !ours:
			case rec.Data.callsTool():
				answer, ok = "", false // the turn goes on after the tool
			case c != "":
				answer, ok = c, true
			}
		}
		return true
	})
	return answer, ok
}

// copilotMessage is the data of a Copilot CLI events file's
// user.message or assistant.message: its text, and the tools an
// assistant message calls.
type copilotMessage struct {
	Content      string            `json:"content"`
	ToolRequests []json.RawMessage `json:"toolRequests"`
}

// callsTool says the message calls a tool: the model's response is not
// the turn's last.
func (m copilotMessage) callsTool() bool { return len(m.ToolRequests) > 0 }
