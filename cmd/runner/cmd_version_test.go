package main

import (
	"encoding/json"
	"runtime/debug"
	"testing"
)

func TestMakeVersion(t *testing.T) {
	const (
		full = "0123456789abcdef0123456789abcdef01234567"
		when = "2026-11-28T10:00:00+01:00"
	)
	vcs := func(kv ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/runner-cli/runner", Version: "(devel)"}}
		for i := 0; i+1 < len(kv); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return bi
	}
	tests := []struct {
		name  string
		stamp buildStamp
		bi    *debug.BuildInfo
		want  versionInfo
	}{
		{"nothing known", buildStamp{}, nil, versionInfo{Version: "devel"}},
		{"devel build without vcs", buildStamp{}, vcs(), versionInfo{Version: "devel"}},
		{"go install at a version", buildStamp{},
			&debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}},
			versionInfo{Version: "v1.2.3"}},
		{"vcs from the build info", buildStamp{},
			vcs("vcs.revision", full, "vcs.time", "2026-11-27T09:00:00Z", "vcs.modified", "true"),
			versionInfo{Version: "devel", Commit: full, Date: "2026-11-27T09:00:00Z", Modified: true}},
		{"stamped release", buildStamp{"v1.2.3", full, when}, nil,
			versionInfo{Version: "v1.2.3", Commit: full, Date: when}},
		{"stamp wins over the build info", buildStamp{"v1.2.3", full, when},
			&debug.BuildInfo{Main: debug.Module{Version: "v0.9.0"}, Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: "fedcba"}, {Key: "vcs.time", Value: "2020-01-01T00:00:00Z"}, {Key: "vcs.modified", Value: "true"}}},
			versionInfo{Version: "v1.2.3", Commit: full, Date: when}},
		{"stamped version only", buildStamp{version: "0.0.0-git20261128.0123456"},
			vcs("vcs.revision", full, "vcs.time", when),
			versionInfo{Version: "0.0.0-git20261128.0123456", Commit: full, Date: when}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.GoVersion, tt.want.Platform = "go1.99", "plan9/mips"
			if got := makeVersion(tt.stamp, tt.bi, "go1.99", "plan9/mips"); got != tt.want {
				t.Errorf("makeVersion = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestVersionString(t *testing.T) {
	const full = "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		v    versionInfo
		want string
	}{
		{versionInfo{Version: "devel", GoVersion: "go1.26.8", Platform: "linux/amd64"},
			"runner devel (go1.26.8, linux/amd64)"},
		{versionInfo{Version: "v1.2.3", Commit: full, Date: "2026-11-28T10:00:00+01:00", GoVersion: "go1.26.8", Platform: "darwin/arm64"},
			"runner v1.2.3 0123456789ab (2026-11-28T10:00:00+01:00, go1.26.8, darwin/arm64)"},
		{versionInfo{Version: "devel", Commit: "abc", Modified: true, GoVersion: "go1.26.8", Platform: "linux/arm64"},
			"runner devel abc+dirty (go1.26.8, linux/arm64)"},
	}
	for _, tt := range tests {
		if got := tt.v.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

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
	var got versionInfo
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil {
		t.Fatalf("version --json = %d, %q, %q: %v", code, out, errOut, err)
	}
	if got.Version != version || got.Commit != commit || got.Date != date || got.Modified || got.GoVersion == "" || got.Platform == "" {
		t.Errorf("version --json = %+v", got)
	}
}
