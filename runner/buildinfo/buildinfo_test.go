package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestMake(t *testing.T) {
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
		stamp Stamp
		bi    *debug.BuildInfo
		want  Info
	}{
		{"nothing known", Stamp{}, nil, Info{Version: "devel"}},
		{"devel build without vcs", Stamp{}, vcs(), Info{Version: "devel"}},
		{"go install at a version", Stamp{},
			&debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}},
			Info{Version: "v1.2.3"}},
		{"vcs from the build info", Stamp{},
			vcs("vcs.revision", full, "vcs.time", "2026-11-27T09:00:00Z", "vcs.modified", "true"),
			Info{Version: "devel", Commit: full, Date: "2026-11-27T09:00:00Z", Modified: true}},
		{"stamped release", Stamp{"v1.2.3", full, when}, nil,
			Info{Version: "v1.2.3", Commit: full, Date: when}},
		{"stamp wins over the build info", Stamp{"v1.2.3", full, when},
			&debug.BuildInfo{Main: debug.Module{Version: "v0.9.0"}, Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: "fedcba"}, {Key: "vcs.time", Value: "2020-01-01T00:00:00Z"}, {Key: "vcs.modified", Value: "true"}}},
			Info{Version: "v1.2.3", Commit: full, Date: when}},
		{"stamped version only", Stamp{Version: "0.0.0-git20261128.0123456"},
			vcs("vcs.revision", full, "vcs.time", when),
			Info{Version: "0.0.0-git20261128.0123456", Commit: full, Date: when}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.GoVersion, tt.want.Platform = "go1.99", "plan9/mips"
			if got := Make(tt.stamp, tt.bi, "go1.99", "plan9/mips"); got != tt.want {
				t.Errorf("Make = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestString(t *testing.T) {
	const full = "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		v    Info
		want string
	}{
		{Info{Version: "devel", GoVersion: "go1.26.8", Platform: "linux/amd64"},
			"runner devel (go1.26.8, linux/amd64)"},
		{Info{Version: "v1.2.3", Commit: full, Date: "2026-11-28T10:00:00+01:00", GoVersion: "go1.26.8", Platform: "darwin/arm64"},
			"runner v1.2.3 0123456789ab (2026-11-28T10:00:00+01:00, go1.26.8, darwin/arm64)"},
		{Info{Version: "devel", Commit: "abc", Modified: true, GoVersion: "go1.26.8", Platform: "linux/arm64"},
			"runner devel abc+dirty (go1.26.8, linux/arm64)"},
	}
	for _, tt := range tests {
		if got := tt.v.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

// TestRead: the running binary's Info has its Go version and platform,
// and the stamp's fields.
func TestRead(t *testing.T) {
	v := Read(Stamp{Version: "v9", Commit: "abc"})
	if v.Version != "v9" || v.Commit != "abc" || v.Modified || v.GoVersion == "" || v.Platform == "" {
		t.Errorf("Read = %+v", v)
	}
}
