package runner

import (
	"strings"
	"testing"

	"github.com/runner-cli/runner/runner/projects"
)

func TestLockKey(t *testing.T) {
	t.Parallel()
	if got := lockKey("api", "/src/api", ""); got != "api" {
		t.Errorf("lockKey(api) = %q", got)
	}
	if got, want := lockKey("", "/src/my.site", ""), projects.SessionName("", "/src/my.site"); got != want || !strings.HasPrefix(got, "dir-my_site-") {
		t.Errorf("lockKey(path) = %q, want %q", got, want)
	}
}
