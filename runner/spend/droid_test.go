package spend

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/runner-cli/runner/runner/profile"
)

// TestDroidTotal: a Factory Droid session's spend is the running total of
// the settings file beside the record its Stop payload names (shaped as
// 0.225.2 writes it), the cache's reads and writes apart, thinking as
// output; a payload naming no record, or a record without the file, is
// unknown.
func TestDroidTotal(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "c60277f2-2258-4efa-8e9c-3fa35cda4b66.jsonl")
	settings := `{"model":"custom:Mock-0","tokenUsage":{"inputTokens":3702,"outputTokens":168,"cacheCreationTokens":10,` +
		`"cacheReadTokens":2367,"thinkingTokens":2,"factoryCredits":0},"lastCallTokenUsage":{"inputTokens":1234,"outputTokens":56,"cacheReadTokens":789}}`
	if err := os.WriteFile(rec, []byte(`{"type":"session_start"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rec[:len(rec)-len(".jsonl")]+".settings.json", []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &profile.Profile{Spend: profile.SpendDroid}
	env := func(string) string { return "" }
	u, ok, complete := TurnUsage(p, profile.HookEvent{Name: "Stop", Transcript: rec}, "", env)
	want := profile.Usage{Input: 3702, Output: 170, Cached: 2377}
	if !ok || !complete || u != want {
		t.Errorf("got %+v ok %v complete %v, want %+v, ok, complete", u, ok, complete, want)
	}
	for _, tr := range []string{"", filepath.Join(dir, "other.jsonl"), rec + ".bak"} {
		if u, ok, _ := TurnUsage(p, profile.HookEvent{Name: "Stop", Transcript: tr}, "", env); ok {
			t.Errorf("record %q: got %+v, want unknown", tr, u)
		}
	}
}
