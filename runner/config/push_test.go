package config

import (
	"strings"
	"testing"

	"github.com/runner-cli/runner/state"
)

func TestNotifyPush(t *testing.T) {
	c, err := Parse([]byte(`{"serve_url": "https://box.example:7777",
	  "notify_push": [{"kind": "webhook", "url": "https://u:pw@hooks.example/x?token=abc", "secret": "s3cret"},
	                  {"kind": "ntfy", "url": "http://127.0.0.1:8080/runner", "events": ["done"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	w, n := c.NotifyPush[0], c.NotifyPush[1]
	if !w.Wants(state.StatusNeedsInput) || !w.Wants(state.StatusLimited) || w.Wants(state.StatusDone) {
		t.Errorf("default events: %v", DefaultPushEvents)
	}
	if !n.Wants(state.StatusDone) || n.Wants(state.StatusNeedsInput) {
		t.Errorf("events [done]: wants needs_input or not done")
	}
	if id := w.ID(); id != "webhook https://hooks.example/x" {
		t.Errorf("ID = %q: want no user, password or query", id)
	}
	for _, tc := range []struct{ in, want string }{
		{`{"notify_push": [{"kind": "slack", "url": "https://x.example/"}]}`, `notify_push[0].kind: "slack"`},
		{`{"notify_push": [{"kind": "webhook", "url": "file:///etc/passwd"}]}`, `notify_push[0].url: scheme "file"`},
		{`{"notify_push": [{"kind": "webhook", "url": "https:///nohost"}]}`, `notify_push[0].url: no host`},
		{`{"notify_push": [{"kind": "webhook", "url": "ftp://x.example/"}]}`, `want http or https`},
		{`{"notify_push": [{"kind": "ntfy", "url": "https://ntfy.sh/t", "events": ["running"]}]}`, `notify_push[0].events: "running"`},
		{`{"notify_push": [{"kind": "ntfy", "url": "https://ntfy.sh/t", "secret": "hidden-value"}]}`, `only a webhook is signed`},
		{`{"serve_url": "javascript:alert(1)"}`, `serve_url: scheme "javascript"`},
	} {
		_, err := Parse([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.in, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "hidden-value") {
			t.Errorf("the secret is printed: %v", err)
		}
	}
}
