package hosts

import (
	"strings"
	"testing"
)

// FuzzAgentPaths: whatever a host answers to where its agents are, only
// the agents asked for come back, each with an absolute path or none.
func FuzzAgentPaths(f *testing.F) {
	f.Add("claude /usr/local/bin/claude\ncodex /home/u/.npm/bin/codex\n")
	f.Add("claude alias claude=x\nevil /bin/sh\n\n")
	f.Add("claude /a b\x00c\r\n")
	agents := []string{"claude", "codex", "gemini"}
	f.Fuzz(func(t *testing.T, out string) {
		got := agentPaths(out, agents)
		if len(got) != len(agents) {
			t.Fatalf("%d agents back for %d asked: %v", len(got), len(agents), got)
		}
		for name, p := range got {
			if p != "" && !strings.HasPrefix(p, "/") {
				t.Fatalf("%s: path %q is not absolute", name, p)
			}
		}
	})
}
