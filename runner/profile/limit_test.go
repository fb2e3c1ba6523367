package profile

import (
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

func TestParseReset(t *testing.T) {
	now := time.Date(2026, 11, 27, 14, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		line string
		want time.Time // zero: none
	}{
		{"Claude AI usage limit reached|1795766400", clock.Outside(time.Unix(1795766400, 0))}, // the CLI's clock is the system's
		{"■ You've hit your usage limit. Try again in 20s.", now.Add(20 * time.Second)},
		{"Rate limit reached: try again in 1h 30m", now.Add(90 * time.Minute)},
		{"try again in 2 days 3 hours 5 minutes", now.Add(51*time.Hour + 5*time.Minute)},
		{"try again in 5 minutes and 10 seconds", now.Add(5*time.Minute + 10*time.Second)},
		{"You've hit your limit · resets 3pm", time.Date(2026, 11, 27, 15, 0, 0, 0, time.UTC)},
		{"5-hour limit reached ∙ resets 2am", time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC)},
		{"Your limit will reset at 12am", time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)},
		{"try again at 3:04 PM.", time.Date(2026, 11, 27, 15, 4, 0, 0, time.UTC)},
		{"try again at 14:00", time.Date(2026, 11, 28, 14, 0, 0, 0, time.UTC)},
		{"■ You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at 2:30 PM.",
			time.Date(2026, 11, 27, 14, 31, 0, 0, time.UTC)},
		{"resets 9pm (Europe/Berlin)", time.Date(2026, 11, 27, 20, 0, 0, 0, time.UTC)},
		{"usage limit reached at 3 requests", time.Time{}},
		{"resets 25:00", time.Time{}},
		{"quota exceeded", time.Time{}},
		{"in 0s", time.Time{}},
	} {
		got, ok := ParseReset(tc.line, now)
		if ok != !tc.want.IsZero() || ok && !got.Equal(tc.want) {
			t.Errorf("ParseReset(%q) = %v, %v; want %v", tc.line, got, ok, tc.want)
		}
	}
}

func TestLimitLine(t *testing.T) {
	p := &Profile{Name: "x", Command: []string{"x"}, Limited: []string{`usage limit`}}
	if err := p.Compile(); err != nil {
		t.Fatal(err)
	}
	if l, ok := p.LimitLine("first\n  Claude AI usage limit reached|1795766400  \nlast"); !ok || l != "Claude AI usage limit reached|1795766400" {
		t.Errorf("LimitLine = %q, %v", l, ok)
	}
	if _, ok := p.LimitLine("all fine"); ok {
		t.Errorf("LimitLine found a limit in a plain answer")
	}
}

func TestIsLimitError(t *testing.T) {
	for text, want := range map[string]bool{
		"Retry failed after 3 attempts: 429 You exceeded your current quota": true,
		"Rate limit reached for requests":                                    true,
		"RESOURCE_EXHAUSTED":                                                 true,
		"connection refused":                                                 false,
		"500 Internal Server Error":                                          false,
	} {
		if got := IsLimitError(text); got != want {
			t.Errorf("IsLimitError(%q) = %v, want %v", text, got, want)
		}
	}
	ev, _ := ParseHookEvent(`{"hook_event_name":"Stop","stop_reason":"error","error":"429 quota"}`)
	if ev.Error != "429 quota" {
		t.Errorf("ParseHookEvent: error %q", ev.Error)
	}
}
