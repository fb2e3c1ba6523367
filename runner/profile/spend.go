// What a turn used, read from the agent CLI's own record of it: the
// turn-end hook's payload, or the session file the CLI keeps (never
// estimated from text).

package profile

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

// The records a profile's Spend names.
const (
	// SpendHook: the turn-end payload's "usage" object (the sim, the
	// OpenCode plugin's and the pi extension's lines): input_tokens,
	// output_tokens, cache_read_input_tokens, cache_creation_input_tokens,
	// cost_usd.
	SpendHook = "hook"
	// SpendClaude: the transcript the Stop payload names
	// (transcript_path): each assistant message's usage, once per message
	// id, after the turn's prompt.
	SpendClaude = "claude-transcript"
	// SpendCodex: the rollout file of the thread the notify payload names
	// ($CODEX_HOME/sessions/…/rollout-…-<thread-id>.jsonl): its running
	// token_count total at the end less the one before the turn's prompt.
	SpendCodex = "codex-session"
	// SpendGemini: the chat file the AfterAgent payload names: the tokens
	// of each "gemini" record after the turn's "user" record.
	SpendGemini = "gemini-chat"
	// SpendQwen: the chat file of the session (the Stop payload's
	// transcript_path, else ~/.qwen/projects/*/chats/<session_id>.jsonl):
	// the usageMetadata of each assistant record after the turn's prompt.
	SpendQwen = "qwen-chat"
	// SpendCopilot: the session's events file the agentStop payload names
	// (transcriptPath): its session.usage_record events after the turn's
	// user.message, read once the turn's answer and end are in it.
	SpendCopilot = "copilot-events"
)

// SpendKinds lists the known Spend values.
var SpendKinds = []string{SpendHook, SpendClaude, SpendCodex, SpendGemini, SpendQwen, SpendCopilot}

// Usage is what one turn used, as the CLI recorded it. Input excludes
// the tokens read from (or written to) the prompt cache, which are
// Cached; Output includes reasoning.
type Usage struct {
	Input, Output, Cached int64
	// CostUSD is the cost the CLI reported, when HasCost.
	CostUSD float64
	HasCost bool
}

// add adds o to u.
func (u *Usage) add(o Usage) {
	u.Input += o.Input
	u.Output += o.Output
	u.Cached += o.Cached
	u.CostUSD += o.CostUSD
	u.HasCost = u.HasCost || o.HasCost
}

// spendWindow bounds how much of a session file is read for one turn:
// its last 16 MiB.
const spendWindow = 16 << 20

// TurnUsage reads what the turn that ev ended used, from the record p's
// Spend names; sig is a piece of the turn's prompt (its first line), ""
// for the last turn. ok is false when the CLI recorded nothing the runner
// can read (then the turn's spend is unknown); complete is false while the
// record does not have the turn's end yet (its answer, as the hook gave
// it: some CLIs run their hook before they write the record), so the
// caller reads again a little later. env looks up the agent's environment
// (HOME, CODEX_HOME).
func TurnUsage(p *Profile, ev HookEvent, sig string, env func(string) string) (u Usage, ok, complete bool) {
	if ev.Usage != nil {
		return *ev.Usage, true, true
	}
	if p == nil {
		return Usage{}, false, true
	}
	var t turnRecord
	switch p.Spend {
	case SpendClaude:
		if ev.Transcript != "" {
			t = claudeUsage(ev.Transcript, sig)
		}
	case SpendCodex:
		if f := codexRollout(ev.Session, env); f != "" {
			t = codexUsage(f, ev.Turn, sig)
		}
	case SpendGemini:
		if ev.Transcript != "" {
			t = geminiUsage(ev.Transcript, sig)
		}
	case SpendQwen:
		if f := qwenChat(ev, env); f != "" {
			t = qwenUsage(f, sig)
		}
	case SpendCopilot:
		if ev.AnswerFile == "" {
			return Usage{}, false, true
		}
		// Its hook's payload has no answer to check the file by: the
		// file's own end of the turn is waited for.
		t = copilotUsage(ev.AnswerFile, sig)
		return t.usage, t.ok, t.ended
	default:
		return Usage{}, false, true
	}
	complete = t.ended || !ev.HasAnswer || answerIn(t.last, ev.Answer)
	return t.usage, t.ok, complete
}

// turnRecord is what a session file tells of one turn: its spend (ok: the
// turn and some usage were found), the text of its last answer, and
// whether the file marks the turn's end.
type turnRecord struct {
	usage Usage
	ok    bool
	last  string
	ended bool
}

// answerIn reports whether a record's last answer is the hook's: the
// first line of the hook's answer is in it.
func answerIn(last, answer string) bool {
	first, _, _ := strings.Cut(strings.TrimSpace(answer), "\n")
	return strings.Contains(normalizeSpace(last), normalizeSpace(first))
}

// usageFromPayload reads a hook payload's "usage" object (Anthropic's
// names, and cost_usd); nil when there is none.
func usageFromPayload(raw json.RawMessage) *Usage {
	var u struct {
		Input       *int64   `json:"input_tokens"`
		Output      *int64   `json:"output_tokens"`
		CacheRead   int64    `json:"cache_read_input_tokens"`
		CacheCreate int64    `json:"cache_creation_input_tokens"`
		Cost        *float64 `json:"cost_usd"`
	}
	if json.Unmarshal(raw, &u) != nil || u.Input == nil || u.Output == nil {
		return nil
	}
	out := &Usage{Input: *u.Input, Output: *u.Output, Cached: u.CacheRead + u.CacheCreate}
	if u.Cost != nil {
		out.CostUSD, out.HasCost = *u.Cost, true
	}
	return out
}

// promptMatches reports whether a user prompt's text is the turn's: it
// holds sig (any prompt does for an empty sig).
func promptMatches(text, sig string) bool {
	return sig == "" || strings.Contains(normalizeSpace(text), normalizeSpace(sig))
}

// claudeUsage sums the usage of Claude Code's assistant messages after the
// last user prompt that holds sig in its transcript (JSON lines: {"type":
// "user"|"assistant", "message": {...}, "timestamp"}). A message is
// written once per content block, each line with the message's usage so
// far: the last line of a message id counts. Tool results are user lines
// too; they do not start a turn. Claude Code writes a prompt's line late
// at times, after the turn's first answer (seen with its prompt hook): a
// line's place is its timestamp, then its place in the file, so an answer
// written before its prompt still counts.
func claudeUsage(path, sig string) (out turnRecord) {
	sc, done, err := tailLines(path, spendWindow)
	if err != nil {
		return out
	}
	defer done()
	type usage struct {
		Input       int64 `json:"input_tokens"`
		Output      int64 `json:"output_tokens"`
		CacheRead   int64 `json:"cache_read_input_tokens"`
		CacheCreate int64 `json:"cache_creation_input_tokens"`
	}
	type line struct {
		Type      string `json:"type"`
		Sidechain bool   `json:"isSidechain"`
		Message   struct {
			ID         string          `json:"id"`
			Content    json.RawMessage `json:"content"`
			StopReason string          `json:"stop_reason"`
			Usage      *usage          `json:"usage"`
		} `json:"message"`
	}
	type early struct {
		raw []byte
		at  lineKey
	}
	var (
		msgs    lastByID[usage]
		started bool
		from    lineKey // the turn's prompt
		last    lineKey // the latest line's place
		pending []early // answers since the last prompt line, not decoded yet
	)
	answer := func(l *line) {
		if text, isText := claudePromptText(l.Message.Content); isText {
			out.last = text
		}
		out.ended = l.Message.StopReason == "end_turn"
		msgs.set(l.Message.ID, *l.Message.Usage)
	}
	for n := 0; sc.Scan(); n++ {
		raw := bytes.TrimSpace(sc.Bytes())
		// Most of a long transcript is tool results (user lines): known
		// without decoding them.
		if bytes.Contains(raw, toolResultKey) {
			continue
		}
		at := lineKey{at: lineTime(raw), n: n}
		if at.at.IsZero() {
			at.at = last.at // no timestamp: the place in the file
		}
		last = at
		isUser := bytes.Contains(raw, userType)
		if !isUser {
			if bytes.Contains(raw, assistantType) && len(pending) < maxEarly {
				pending = append(pending, early{bytes.Clone(raw), at})
			}
			if !started {
				continue // an answer before the turn: decoded if its prompt comes late
			}
		}
		var l line
		if json.Unmarshal(raw, &l) != nil || l.Sidechain {
			continue
		}
		switch l.Type {
		case "user":
			text, isPrompt := claudePromptText(l.Message.Content)
			if !isPrompt {
				continue
			}
			if promptMatches(text, sig) {
				msgs, started, from, out.last, out.ended = lastByID[usage]{}, true, at, "", false
				// Its answers written before it.
				for _, e := range pending {
					var a line
					if e.at.after(from) && json.Unmarshal(e.raw, &a) == nil && !a.Sidechain && a.Type == "assistant" && a.Message.Usage != nil {
						answer(&a)
					}
				}
			}
			pending = pending[:0]
		case "assistant":
			if started && l.Message.Usage != nil && at.after(from) {
				answer(&l)
			}
		}
	}
	msgs.each(func(x usage) {
		out.usage.add(Usage{Input: x.Input, Output: x.Output, Cached: x.CacheRead + x.CacheCreate})
	})
	out.ok = started && msgs.len() > 0
	return out
}

// maxEarly bounds the answers kept, undecoded, until the next prompt line
// (one written late comes a few lines after its answers).
const maxEarly = 64

// lineKey is a transcript line's place: its timestamp (zero for none),
// then its line number.
type lineKey struct {
	at time.Time
	n  int
}

func (k lineKey) after(o lineKey) bool {
	return k.at.After(o.at) || k.at.Equal(o.at) && k.n > o.n
}

// lineTime reads a JSON line's "timestamp" (RFC 3339) without decoding
// the line; zero when it has none.
func lineTime(raw []byte) time.Time {
	i := bytes.Index(raw, timestampKey)
	if i < 0 {
		return time.Time{}
	}
	rest := raw[i+len(timestampKey):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return time.Time{}
	}
	t, _ := time.Parse(time.RFC3339Nano, string(rest[:j]))
	return clock.Outside(t)
}

// lastByID keeps the last value set for each id, in the order the ids
// first came (a session file rewrites a message as it streams: its last
// line counts, once); an empty id is a value of its own.
type lastByID[T any] struct {
	order []string
	m     map[string]T
}

func (l *lastByID[T]) set(id string, v T) {
	if l.m == nil {
		l.m = map[string]T{}
	}
	if id == "" {
		id = "\x00" + strconv.Itoa(len(l.order))
	}
	if _, seen := l.m[id]; !seen {
		l.order = append(l.order, id)
	}
	l.m[id] = v
}

func (l *lastByID[T]) len() int { return len(l.order) }

func (l *lastByID[T]) each(fn func(T)) {
	for _, id := range l.order {
		fn(l.m[id])
	}
}

// Keys that tell a transcript line's kind without decoding it.
var (
	toolResultKey = []byte(`"tool_result"`)
	userType      = []byte(`"type":"user"`)
	assistantType = []byte(`"type":"assistant"`)
	timestampKey  = []byte(`"timestamp":"`)
)

// claudePromptText is the text of a Claude Code message's content, and
// whether it has text (a string, or text blocks) rather than tool results
// or tool calls alone.
func claudePromptText(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return "", false
	}
	var b strings.Builder
	text := false
	for _, bl := range blocks {
		switch bl.Type {
		case "text":
			b.WriteString(bl.Text)
			text = true
		case "tool_result":
			return "", false
		}
	}
	return b.String(), text
}

// codexRollout finds the rollout file of Codex thread id under
// $CODEX_HOME/sessions (default ~/.codex/sessions): "" when there is none.
func codexRollout(id string, env func(string) string) string {
	if id == "" || strings.ContainsAny(id, `/\*?[`) {
		return ""
	}
	home := env("CODEX_HOME")
	if home == "" {
		h := env("HOME")
		if h == "" {
			return ""
		}
		home = filepath.Join(h, ".codex")
	}
	matches, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*", "*", "rollout-*"+id+".jsonl"))
	if len(matches) == 0 {
		return ""
	}
	return matches[len(matches)-1]
}

// codexUsage is a turn's spend from a Codex rollout file: the thread's
// running total (token_count events' total_token_usage) at the turn's end,
// less the total before it began. The turn is the notify payload's turn
// id (its task_started event), else the last user message that holds sig
// (a user_message event, or a user message item).
func codexUsage(path, turn, sig string) (out turnRecord) {
	sc, done, err := tailLines(path, spendWindow)
	if err != nil {
		return out
	}
	defer done()
	type total struct {
		Input  int64 `json:"input_tokens"`
		Cached int64 `json:"cached_input_tokens"`
		Output int64 `json:"output_tokens"`
	}
	var last, before total
	started, counted := false, false
	begin := func() { before, started, counted, out.last, out.ended = last, true, false, "", false }
	for sc.Scan() {
		var line struct {
			Type    string `json:"type"`
			Payload struct {
				Type    string          `json:"type"`
				Role    string          `json:"role"`
				TurnID  string          `json:"turn_id"`
				Message string          `json:"message"`
				Content json.RawMessage `json:"content"`
				Last    *string         `json:"last_agent_message"`
				Info    *struct {
					Total total `json:"total_token_usage"`
				} `json:"info"`
			} `json:"payload"`
		}
		raw := bytes.TrimSpace(sc.Bytes())
		if !codexKeys.MatchString(string(raw[:min(len(raw), 160)])) {
			continue // tool calls and their output: nothing of the turn's spend
		}
		if json.Unmarshal(raw, &line) != nil {
			continue
		}
		pl := line.Payload
		switch {
		case line.Type == "event_msg" && pl.Type == "task_started":
			if turn != "" && pl.TurnID == turn {
				begin()
			}
		case line.Type == "event_msg" && pl.Type == "user_message":
			if turn == "" && promptMatches(pl.Message, sig) {
				begin()
			}
		case line.Type == "response_item" && pl.Type == "message" && pl.Role == "user":
			if turn == "" && sig != "" && promptMatches(codexText(pl.Content), sig) {
				begin()
			}
		case line.Type == "response_item" && pl.Type == "message" && pl.Role == "assistant":
			if started {
				out.last = codexText(pl.Content)
			}
		case line.Type == "event_msg" && pl.Type == "token_count":
			if pl.Info != nil {
				last = pl.Info.Total
				counted = counted || started
			}
		case line.Type == "event_msg" && pl.Type == "task_complete":
			if started && (turn == "" || pl.TurnID == turn) {
				out.ended = true
				if pl.Last != nil {
					out.last = *pl.Last
				}
			}
		}
	}
	if !started || !counted {
		return out
	}
	out.usage = Usage{Input: (last.Input - last.Cached) - (before.Input - before.Cached),
		Cached: last.Cached - before.Cached, Output: last.Output - before.Output}
	out.ok = true
	return out
}

// codexKeys matches the start of the rollout lines codexUsage reads (the
// payload's type comes first in Codex's records).
var codexKeys = regexp.MustCompile(`"type":"(?:token_count|task_started|task_complete|user_message|message)"`)

// codexText is the text of a Codex message item's content parts
// (input_text, output_text).
func codexText(raw json.RawMessage) string {
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// geminiUsage sums the tokens of the "gemini" records after the last
// "user" record that holds sig in a Gemini CLI chat file (a record
// rewritten as it streams counts once, by its id). A record's input counts
// its cached tokens, which are taken out; thoughts are output, tool-use
// prompt tokens input.
func geminiUsage(path, sig string) (out turnRecord) {
	sc, done, err := tailLines(path, spendWindow)
	if err != nil {
		return out
	}
	defer done()
	type tokens struct {
		Input    int64 `json:"input"`
		Output   int64 `json:"output"`
		Cached   int64 `json:"cached"`
		Thoughts int64 `json:"thoughts"`
		Tool     int64 `json:"tool"`
	}
	var (
		msgs    lastByID[tokens]
		started bool
	)
	for sc.Scan() {
		var line struct {
			ID      string          `json:"id"`
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
			Tokens  *tokens         `json:"tokens"`
		}
		if json.Unmarshal(bytes.TrimSpace(sc.Bytes()), &line) != nil {
			continue
		}
		switch line.Type {
		case "user":
			if promptMatches(chatText(line.Content), sig) {
				msgs, started, out.last = lastByID[tokens]{}, true, ""
			}
		case "gemini":
			if !started {
				continue
			}
			if text := chatText(line.Content); strings.TrimSpace(text) != "" {
				out.last = text
			}
			if line.Tokens == nil {
				continue
			}
			msgs.set(line.ID, *line.Tokens)
		}
	}
	msgs.each(func(t tokens) {
		out.usage.add(Usage{Input: t.Input - t.Cached + t.Tool, Cached: t.Cached, Output: t.Output + t.Thoughts})
	})
	out.ok = started && msgs.len() > 0
	return out
}

// qwenChat is the chat file of a Qwen Code session: the payload's
// transcript_path, else ~/.qwen/projects/*/chats/<session>.jsonl.
func qwenChat(ev HookEvent, env func(string) string) string {
	if ev.Transcript != "" {
		return ev.Transcript
	}
	home := env("HOME")
	if ev.Session == "" || home == "" || strings.ContainsAny(ev.Session, `/\*?[`) {
		return ""
	}
	matches, _ := filepath.Glob(filepath.Join(home, ".qwen", "projects", "*", "chats", ev.Session+".jsonl"))
	if len(matches) == 0 {
		return ""
	}
	return matches[len(matches)-1]
}

// qwenUsage sums the usageMetadata of Qwen Code's assistant records after
// the last user record that holds sig (JSON lines: {"uuid", "type":
// "user"|"assistant"|"tool_result"|"system", "message": {"parts": …},
// "usageMetadata": {promptTokenCount, candidatesTokenCount,
// cachedContentTokenCount, thoughtsTokenCount}}).
func qwenUsage(path, sig string) (out turnRecord) {
	sc, done, err := tailLines(path, spendWindow)
	if err != nil {
		return out
	}
	defer done()
	started := false
	for sc.Scan() {
		var line struct {
			Type    string `json:"type"`
			Message struct {
				Parts json.RawMessage `json:"parts"`
			} `json:"message"`
			Usage *struct {
				Prompt     int64 `json:"promptTokenCount"`
				Candidates int64 `json:"candidatesTokenCount"`
				Cached     int64 `json:"cachedContentTokenCount"`
				Thoughts   int64 `json:"thoughtsTokenCount"`
			} `json:"usageMetadata"`
		}
		if json.Unmarshal(bytes.TrimSpace(sc.Bytes()), &line) != nil {
			continue
		}
		switch line.Type {
		case "user":
			if promptMatches(chatText(line.Message.Parts), sig) {
				out, started = turnRecord{}, true
			}
		case "assistant":
			if !started {
				continue
			}
			if text := chatText(line.Message.Parts); strings.TrimSpace(text) != "" {
				out.last = text
			}
			if x := line.Usage; x != nil {
				out.usage.add(Usage{Input: x.Prompt - x.Cached, Cached: x.Cached, Output: x.Candidates + x.Thoughts})
				out.ok = true
			}
		}
	}
	return out
}

// copilotUsage sums the session.usage_record events of a GitHub Copilot
// CLI session's events file after the last user.message that holds sig
// (inputTokens counts the cache's reads and writes, which are taken out).
// The turn has ended once an assistant.turn_end follows an answer (an
// assistant.message with content).
func copilotUsage(path, sig string) (out turnRecord) {
	sc, done, err := tailLines(path, spendWindow)
	if err != nil {
		return out
	}
	defer done()
	started, answered := false, false
	for sc.Scan() {
		var line struct {
			Type string `json:"type"`
			Data struct {
				Content string `json:"content"`
				Usage   *struct {
					Input      int64 `json:"inputTokens"`
					Output     int64 `json:"outputTokens"`
					CacheRead  int64 `json:"cacheReadTokens"`
					CacheWrite int64 `json:"cacheWriteTokens"`
				} `json:"usage"`
			} `json:"data"`
		}
		if json.Unmarshal(bytes.TrimSpace(sc.Bytes()), &line) != nil {
			continue
		}
		switch line.Type {
		case "user.message":
			if promptMatches(line.Data.Content, sig) {
				out, started, answered = turnRecord{}, true, false
			}
		case "session.usage_record":
			if u := line.Data.Usage; started && u != nil {
				cached := u.CacheRead + u.CacheWrite
				out.usage.add(Usage{Input: u.Input - cached, Cached: cached, Output: u.Output})
				out.ok, out.ended = true, false
			}
		case "assistant.message":
			if started && strings.TrimSpace(line.Data.Content) != "" {
				out.last, answered = line.Data.Content, true
			}
		case "assistant.turn_end":
			out.ended = started && answered
		}
	}
	return out
}
