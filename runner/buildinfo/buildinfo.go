// Package buildinfo is what `runner version` says of the binary: the
// version, commit and date a release stamps at link time (Stamp), each
// falling back to Go's build info (Make), with the Go version and the
// platform.
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// Info is runner's version, as `runner version --json` prints it.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	Date      string `json:"date,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"`
}

// Stamp is what the linker's -X flags set (empty when not given).
type Stamp struct {
	Version, Commit, Date string
}

// Read is the running binary's Info: s over its build info.
func Read(s Stamp) Info {
	bi, _ := debug.ReadBuildInfo()
	return Make(s, bi, runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH)
}

// Make fills the version from the stamp, falling back to the build info
// (bi may be nil) field by field. Whether the tree was modified is taken
// from the build info only with its commit: a stamped commit names
// exactly what was built.
func Make(s Stamp, bi *debug.BuildInfo, goVersion, platform string) Info {
	v := Info{Version: s.Version, Commit: s.Commit, Date: s.Date, GoVersion: goVersion, Platform: platform}
	if bi != nil {
		if v.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v.Version = bi.Main.Version
		}
		for _, kv := range bi.Settings {
			switch kv.Key {
			case "vcs.revision":
				if s.Commit == "" {
					v.Commit = kv.Value
				}
			case "vcs.time":
				if s.Date == "" {
					v.Date = kv.Value
				}
			case "vcs.modified":
				v.Modified = s.Commit == "" && kv.Value == "true"
			}
		}
	}
	if v.Version == "" {
		v.Version = "devel"
	}
	return v
}

// String is the line `runner version` prints:
//
//	runner v1.2.3 0123456789ab (2026-11-28T10:00:00Z, go1.26.8, linux/amd64)
func (v Info) String() string {
	s := "runner " + v.Version
	if v.Commit != "" {
		s += " " + v.Commit[:min(12, len(v.Commit))]
		if v.Modified {
			s += "+dirty"
		}
	}
	s += " ("
	if v.Date != "" {
		s += v.Date + ", "
	}
	return s + v.GoVersion + ", " + v.Platform + ")"
}
