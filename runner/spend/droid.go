package spend

import (
	"encoding/json"
	"strings"

	"github.com/runner-cli/runner/internal/tailfile"
	"github.com/runner-cli/runner/runner/profile"
)

// droidSettingsMax bounds a Droid session's settings file (a few hundred
// bytes): a larger one is not read.
const droidSettingsMax = 1 << 20

// droidTotal reads what a Factory Droid session used so far: the running
// tokenUsage total of the settings file beside its record (transcript,
// ~/.factory/sessions/<folder>/<id>.jsonl → <id>.settings.json; 0.225.2).
// Its record keeps no usage per message; the settings file keeps the
// total (and the last call's), rewritten after each model call. Its
// inputTokens leave out the cache's reads and writes; thinking is output.
// ok is false when there is no such file or no total in it.
func droidTotal(transcript string) (u profile.Usage, ok bool) {
	base, isRecord := strings.CutSuffix(transcript, ".jsonl")
	if !isRecord || base == "" {
		return profile.Usage{}, false
	}
	b, err := tailfile.Bytes(base+".settings.json", droidSettingsMax)
	if err != nil || len(b) >= droidSettingsMax {
		return profile.Usage{}, false
	}
	var s struct {
		Total *struct {
			Input       int64 `json:"inputTokens"`
			Output      int64 `json:"outputTokens"`
			CacheCreate int64 `json:"cacheCreationTokens"`
			CacheRead   int64 `json:"cacheReadTokens"`
			Thinking    int64 `json:"thinkingTokens"`
		} `json:"tokenUsage"`
	}
	if json.Unmarshal(b, &s) != nil || s.Total == nil {
		return profile.Usage{}, false
	}
	t := s.Total
	return profile.Usage{Input: t.Input, Output: t.Output + t.Thinking, Cached: t.CacheRead + t.CacheCreate}, true
}
