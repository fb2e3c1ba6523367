// What a turn used: the records a profile's Spend names, and Usage, as a
// turn-end hook's payload gives it. runner/spend reads the records.

package profile

import "encoding/json"

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
	// SpendDroid: the session's settings file beside the record the Stop
	// payload names (transcript_path's <id>.settings.json): its running
	// tokenUsage total, of which a turn's is what grew since the turn
	// began (the task's earlier turns of the session taken out: see
	// SessionTotal).
	SpendDroid = "droid-settings"
	// SpendCline: the messages file of the Cline CLI session whose latest
	// prompt is the turn's (~/.cline/data/sessions/<id>/<id>.messages.json;
	// no hook names it): the metrics of each assistant message after it.
	SpendCline = "cline-messages"
)

// SessionTotal reports whether the record a Spend names gives the
// session's running total alone (SpendDroid): what a turn used is that
// total less what the session's earlier turns used.
func SessionTotal(spend string) bool { return spend == SpendDroid }

// SpendKinds lists the known Spend values.
var SpendKinds = []string{SpendHook, SpendClaude, SpendCodex, SpendGemini, SpendQwen, SpendCopilot, SpendDroid, SpendCline}

// Usage is what one turn used, as the CLI recorded it. Input excludes
// the tokens read from (or written to) the prompt cache, which are
// Cached; Output includes reasoning.
type Usage struct {
	Input, Output, Cached int64
	// CostUSD is the cost the CLI reported, when HasCost.
	CostUSD float64
	HasCost bool
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
