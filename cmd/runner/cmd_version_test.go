package main

import (
	"encoding/json"
	"testing"

	"github.com/runner-cli/runner/runner/buildinfo"
)

// TestVersionStamped runs `runner version` with the variables a release's
// -ldflags -X set.
func TestVersionStamped(t *testing.T) {
	old := [3]string{version, commit, date}
	t.Cleanup(func() { version, commit, date = old[0], old[1], old[2] })
	version, commit, date = "v1.2.3", "0123456789abcdef0123456789abcdef01234567", "2026-11-28T10:00:00+01:00"

	code, out, errOut := runMain(t, "", "version")
	if want := "runner v1.2.3 0123456789ab (2026-11-28T10:00:00+01:00, "; code != 0 || len(out) < len(want) || out[:len(want)] != want {
		t.Errorf("version = %d, %q, %q; want 0 and a line starting %q", code, out, errOut, want)
	}
	code, out, errOut = runMain(t, "", "version", "--json")
	var got buildinfo.Info
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil {
		t.Fatalf("version --json = %d, %q, %q: %v", code, out, errOut, err)
	}
	if got.Version != version || got.Commit != commit || got.Date != date || got.Modified || got.GoVersion == "" || got.Platform == "" {
		t.Errorf("version --json = %+v", got)
	}
}
