package spend

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runner-cli/runner/runner/profile"
)

// writeLines writes the JSON lines to a file in a temporary directory.
func writeLines(t *testing.T, name string, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// claudeTurn is a Claude Code transcript of two turns, shaped as 2.1.197
// writes them: the second has a tool call (its message written on two
// lines, one per content block) and an answer.
var claudeTurn = []string{
	`{"type":"user","message":{"role":"user","content":"first prompt"},"isSidechain":false}`,
	`{"type":"assistant","message":{"id":"msg_1","content":[{"type":"text","text":"first answer"}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":5,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}}`,
	`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"<system-reminder>x</system-reminder> please do the SPEND-ONE now"}]}}`,
	`{"type":"assistant","message":{"id":"msg_2","content":[{"type":"thinking","thinking":"hm"}],"stop_reason":null,"usage":{"input_tokens":1234,"output_tokens":1,"cache_read_input_tokens":789,"cache_creation_input_tokens":0}}}`,
	`{"type":"assistant","message":{"id":"msg_2","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}],"stop_reason":"tool_use","usage":{"input_tokens":1234,"output_tokens":56,"cache_read_input_tokens":789,"cache_creation_input_tokens":0}}}`,
	`{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"ok"}]}}`,
	`{"type":"assistant","isSidechain":true,"message":{"id":"msg_side","content":[{"type":"text","text":"sub"}],"usage":{"input_tokens":999,"output_tokens":999}}}`,
	`{"type":"assistant","message":{"id":"msg_3","content":[{"type":"text","text":"SPEND-ONE-DONE"}],"stop_reason":"end_turn","usage":{"input_tokens":1234,"output_tokens":56,"cache_read_input_tokens":789,"cache_creation_input_tokens":11}}}`,
}

// codexTurn is a Codex 0.169 rollout file: a turn told by its id, with a
// token count before it (an earlier turn's) and two during it.
var codexTurn = []string{
	`{"type":"session_meta","payload":{"id":"th-1"}}`,
	`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":100,"cached_input_tokens":40,"output_tokens":7}}}}`,
	`{"type":"event_msg","payload":{"type":"task_complete","turn_id":"turn-0","last_agent_message":"old"}}`,
	`{"type":"event_msg","payload":{"type":"task_started","turn_id":"turn-1"}}`,
	`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"please do the SPEND-ONE now"}]}}`,
	`{"type":"event_msg","payload":{"type":"token_count","info":null}}`,
	`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":2123,"cached_input_tokens":829,"output_tokens":63}}}}`,
	`{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"SPEND-ONE-DONE"}]}}`,
	`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":4146,"cached_input_tokens":1618,"output_tokens":119}}}}`,
	`{"type":"event_msg","payload":{"type":"task_complete","turn_id":"turn-1","last_agent_message":"SPEND-ONE-DONE"}}`,
}

// qwenTurn is a Qwen Code 0.15 chat file: a turn with a tool call, its
// result, and the answer.
var qwenTurn = []string{
	`{"type":"user","message":{"role":"user","parts":[{"text":"earlier"}]}}`,
	`{"type":"assistant","message":{"role":"model","parts":[{"text":"old"}]},"usageMetadata":{"promptTokenCount":50,"candidatesTokenCount":5}}`,
	`{"type":"user","message":{"role":"user","parts":[{"text":"please do the SPEND-ONE now"}]}}`,
	`{"type":"system","subtype":"ui_telemetry"}`,
	`{"type":"assistant","message":{"role":"model","parts":[{"functionCall":{"name":"run_shell_command"}}]},"usageMetadata":{"promptTokenCount":2023,"candidatesTokenCount":56,"cachedContentTokenCount":789,"thoughtsTokenCount":4}}`,
	`{"type":"tool_result","message":{"role":"user","parts":[{"functionResponse":{"name":"run_shell_command"}}]}}`,
	`{"type":"assistant","message":{"role":"model","parts":[{"text":"SPEND-ONE-DONE"}]},"usageMetadata":{"promptTokenCount":2023,"candidatesTokenCount":56,"cachedContentTokenCount":789}}`,
}

// copilotTurn is a GitHub Copilot CLI 1.0.102 session's events file: a
// turn with a tool call (two usage records) and its answer.
var copilotTurn = []string{
	`{"type":"user.message","data":{"content":"please do the SPEND-ONE now"}}`,
	`{"type":"session.usage_record","data":{"usage":{"inputTokens":2023,"outputTokens":56,"cacheReadTokens":789,"cacheWriteTokens":0,"cost":0.0}}}`,
	`{"type":"assistant.message","data":{"content":"","toolRequests":[{"name":"bash"}]}}`,
	`{"type":"assistant.turn_end","data":{}}`,
	`{"type":"session.usage_record","data":{"usage":{"inputTokens":2023,"outputTokens":56,"cacheReadTokens":789,"cacheWriteTokens":10}}}`,
	`{"type":"assistant.message","data":{"content":"SPEND-ONE-DONE"}}`,
	`{"type":"assistant.turn_end","data":{}}`,
}

// copilotToolText is copilotTurn with text in the model's tool-call
// response ("I'll create the file."): not the turn's answer, and its
// assistant.turn_end not the turn's end.
var copilotToolText = []string{
	copilotTurn[0], copilotTurn[1],
	`{"type":"assistant.message","data":{"content":"I'll create the file.","toolRequests":[{"name":"bash"}]}}`,
	copilotTurn[3],
	`{"type":"tool.execution_complete","data":{}}`,
	copilotTurn[4], copilotTurn[5], copilotTurn[6],
}

// claudeLate is a Claude Code 2.1.197 transcript whose prompt line was
// written after the turn's first answer (seen with its prompt hook): the
// timestamps tell the order.
var claudeLate = []string{
	`{"type":"user","message":{"role":"user","content":"first prompt"},"timestamp":"2026-11-27T12:08:50.000Z"}`,
	`{"type":"assistant","message":{"id":"msg_1","content":[{"type":"text","text":"first answer"}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":5}},"timestamp":"2026-11-27T12:08:51.000Z"}`,
	`{"type":"assistant","message":{"id":"msg_2","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}],"stop_reason":"tool_use","usage":{"input_tokens":1234,"output_tokens":56,"cache_read_input_tokens":789}},"timestamp":"2026-11-27T12:08:55.777Z"}`,
	`{"type":"file-history-snapshot","messageId":"x","snapshot":{"timestamp":"2026-11-27T12:08:55.713Z"}}`,
	`{"type":"user","message":{"role":"user","content":"please do the SPEND-ONE now"},"timestamp":"2026-11-27T12:08:55.688Z"}`,
	`{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"ok"}]},"timestamp":"2026-11-27T12:08:55.800Z"}`,
	`{"type":"assistant","message":{"id":"msg_3","content":[{"type":"text","text":"SPEND-ONE-DONE"}],"stop_reason":"end_turn","usage":{"input_tokens":1234,"output_tokens":56,"cache_read_input_tokens":789}},"timestamp":"2026-11-27T12:08:55.870Z"}`,
}

func TestTurnUsage(t *testing.T) {
	home := t.TempDir()
	rollout := filepath.Join(home, ".codex", "sessions", "2026", "11", "27", "rollout-2026-11-27T07-56-14-th-1.jsonl")
	if err := os.MkdirAll(filepath.Dir(rollout), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rollout, []byte(strings.Join(codexTurn, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	claude := writeLines(t, "claude.jsonl", claudeTurn...)
	claudeCut := writeLines(t, "claude-cut.jsonl", claudeTurn[:6]...)
	qwen := writeLines(t, "qwen.jsonl", qwenTurn...)
	copilot := writeLines(t, "copilot.jsonl", copilotTurn...)
	copilotCut := writeLines(t, "copilot-cut.jsonl", copilotTurn[:5]...)
	copilotText := writeLines(t, "copilot-text.jsonl", copilotToolText...)
	copilotTextCut := writeLines(t, "copilot-text-cut.jsonl", copilotToolText[:5]...)
	tests := []struct {
		name         string
		spend        string
		ev           profile.HookEvent
		sig          string
		want         profile.Usage
		ok, complete bool
	}{
		{"claude: per message id, the last line; sidechains left out", profile.SpendClaude,
			profile.HookEvent{Transcript: claude, Answer: "SPEND-ONE-DONE", HasAnswer: true}, "please do the SPEND-ONE",
			profile.Usage{Input: 2468, Output: 112, Cached: 1589}, true, true},
		{"claude: the prompt's line written after the first answer", profile.SpendClaude,
			profile.HookEvent{Transcript: writeLines(t, "claude-late.jsonl", claudeLate...), Answer: "SPEND-ONE-DONE", HasAnswer: true}, "please do the SPEND-ONE",
			profile.Usage{Input: 2468, Output: 112, Cached: 1578}, true, true},
		{"claude: the answer not written yet", profile.SpendClaude,
			profile.HookEvent{Transcript: claudeCut, Answer: "SPEND-ONE-DONE", HasAnswer: true}, "please do the SPEND-ONE",
			profile.Usage{Input: 1234, Output: 56, Cached: 789}, true, false},
		{"claude: the last turn without a signature", profile.SpendClaude,
			profile.HookEvent{Transcript: claude}, "", profile.Usage{Input: 2468, Output: 112, Cached: 1589}, true, true},
		{"claude: no such prompt", profile.SpendClaude,
			profile.HookEvent{Transcript: claude}, "another prompt", profile.Usage{}, false, true},
		{"claude: no transcript", profile.SpendClaude, profile.HookEvent{Transcript: filepath.Join(home, "none")}, "", profile.Usage{}, false, true},
		{"codex: by turn id, the total's difference", profile.SpendCodex,
			profile.HookEvent{Session: "th-1", Turn: "turn-1", Answer: "SPEND-ONE-DONE", HasAnswer: true}, "please do",
			profile.Usage{Input: 4146 - 1618 - 60, Cached: 1618 - 40, Output: 112}, true, true},
		{"codex: by prompt, without a turn id", profile.SpendCodex,
			profile.HookEvent{Session: "th-1"}, "please do the SPEND-ONE", profile.Usage{Input: 4146 - 1618 - 60, Cached: 1618 - 40, Output: 112}, true, true},
		{"codex: an unknown thread", profile.SpendCodex, profile.HookEvent{Session: "th-9", Turn: "turn-1"}, "", profile.Usage{}, false, true},
		{"codex: a thread id that is a pattern", profile.SpendCodex, profile.HookEvent{Session: "*", Turn: "turn-1"}, "", profile.Usage{}, false, true},
		{"gemini: the chat file's tokens", profile.SpendGemini,
			profile.HookEvent{Transcript: filepath.Join("testdata", "gemini-chat.jsonl")}, "please do the ANSWER-TASK", profile.Usage{Input: 10, Output: 10}, true, true},
		{"qwen: usageMetadata, cached and thoughts", profile.SpendQwen,
			profile.HookEvent{Transcript: qwen, Answer: "SPEND-ONE-DONE", HasAnswer: true}, "please do the SPEND-ONE",
			profile.Usage{Input: 2 * (2023 - 789), Cached: 2 * 789, Output: 112 + 4}, true, true},
		{"qwen: the answer not written yet", profile.SpendQwen,
			profile.HookEvent{Transcript: qwen, Answer: "ANOTHER ANSWER", HasAnswer: true}, "please do the SPEND-ONE",
			profile.Usage{Input: 2 * (2023 - 789), Cached: 2 * 789, Output: 112 + 4}, true, false},
		{"copilot: usage records after the prompt, cache taken out", profile.SpendCopilot,
			profile.HookEvent{AnswerFile: copilot}, "please do the SPEND-ONE",
			profile.Usage{Input: 2*(2023-789) - 10, Cached: 2*789 + 10, Output: 112}, true, true},
		{"copilot: the turn's end not written yet", profile.SpendCopilot,
			profile.HookEvent{AnswerFile: copilotCut}, "please do the SPEND-ONE",
			profile.Usage{Input: 2*(2023-789) - 10, Cached: 2*789 + 10, Output: 112}, true, false},
		{"copilot: a tool call with text, then the answer: both responses", profile.SpendCopilot,
			profile.HookEvent{AnswerFile: copilotText}, "please do the SPEND-ONE",
			profile.Usage{Input: 2*(2023-789) - 10, Cached: 2*789 + 10, Output: 112}, true, true},
		{"copilot: a tool call with text, its response's end is not the turn's", profile.SpendCopilot,
			profile.HookEvent{AnswerFile: copilotTextCut}, "please do the SPEND-ONE",
			profile.Usage{Input: 2023 - 789, Cached: 789, Output: 56}, true, false},
		{"no record named", "", profile.HookEvent{Transcript: claude}, "", profile.Usage{}, false, true},
		{"the payload's own usage wins", profile.SpendClaude,
			profile.HookEvent{Transcript: claude, Usage: &profile.Usage{Input: 1, Output: 2, CostUSD: 0.5, HasCost: true}}, "",
			profile.Usage{Input: 1, Output: 2, CostUSD: 0.5, HasCost: true}, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &profile.Profile{Name: "x", Spend: tc.spend}
			got, ok, complete := TurnUsage(p, tc.ev, tc.sig, env)
			if got != tc.want || ok != tc.ok || complete != tc.complete {
				t.Errorf("TurnUsage = %+v, ok %v, complete %v; want %+v, %v, %v", got, ok, complete, tc.want, tc.ok, tc.complete)
			}
		})
	}
}

// BenchmarkTurnUsageClaude measures reading a turn's spend at its end from
// a long session's transcript (16 MiB, the window read; 2 000 turns of
// about 8 KiB, a tool call each), against a baseline from the same run:
// reading the same window and counting its lines, which any reader of the
// file does.
func BenchmarkTurnUsageClaude(b *testing.B) {
	path := filepath.Join(b.TempDir(), "claude.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	pad := strings.Repeat("x", 7000) // a tool's output in the tool result
	for i := 0; f != nil; i++ {
		for _, l := range claudeTurn[2:] {
			l = strings.Replace(l, "SPEND-ONE", fmt.Sprintf("SPEND-%d", i), 1)
			l = strings.Replace(l, `"content":"ok"`, `"content":"`+pad+`"`, 1)
			if _, err := f.WriteString(l + "\n"); err != nil {
				b.Fatal(err)
			}
		}
		if st, _ := f.Stat(); st.Size() >= spendWindow {
			f.Close()
			f = nil
		}
	}
	p := &profile.Profile{Name: "claude", Spend: profile.SpendClaude}
	ev := profile.HookEvent{Transcript: path}
	b.Run("baseline-read-count-lines", func(b *testing.B) {
		for b.Loop() {
			raw, err := os.ReadFile(path)
			if err != nil || bytes.Count(raw, []byte("\n")) == 0 {
				b.Fatal(err)
			}
		}
	})
	b.Run("turn-usage", func(b *testing.B) {
		for b.Loop() {
			if _, ok, _ := TurnUsage(p, ev, "", nil); !ok {
				b.Fatal("no spend read")
			}
		}
	})
}
