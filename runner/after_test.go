package runner

import (
	"strings"
	"testing"

	"github.com/runner-cli/runner/runner/projects"
)

func TestLockKey(t *testing.T) {
	t.Parallel()
	if got := projects.LockKey("api", "/src/api", ""); got != "api" {
		t.Errorf("projects.LockKey(api) = %q", got)
	}
	if got, want := projects.LockKey("", "/src/my.site", ""), projects.SessionName("", "/src/my.site"); got != want || !strings.HasPrefix(got, "dir-my_site-") {
		t.Errorf("projects.LockKey(path) = %q, want %q", got, want)
	}
}
