package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// PathInfo is where the config file is, whether it exists, and why that
// path (`runner config path --json`).
type PathInfo struct {
	Path   string `json:"path"`
	Exists bool   `json:"exists"`
	// Source is the variable the path comes from: RUNNER_CONFIG,
	// XDG_CONFIG_HOME or HOME.
	Source string `json:"source"`
}

// Locate is the config file's PathInfo; a path that cannot be looked at
// (other than missing) is an error, the path and source given still. With
// none of the variables set, the path is "".
func Locate(getenv func(string) string) (PathInfo, error) {
	path, source := Path(getenv)
	if path == "" {
		return PathInfo{Source: source}, nil
	}
	_, err := os.Stat(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return PathInfo{Path: path, Source: source}, fmt.Errorf("config path: %w", err)
	}
	return PathInfo{Path: path, Exists: err == nil, Source: source}, nil
}

// ShowHeader is the first line of `runner config show` without --json:
// which file was read over the built-in defaults, if any.
func ShowHeader(path string) string {
	switch _, statErr := os.Stat(path); {
	case path == "":
		return "# no config file (none of RUNNER_CONFIG, XDG_CONFIG_HOME, HOME is set): built-in defaults"
	case statErr != nil:
		return "# " + path + " does not exist: built-in defaults"
	default:
		return "# " + path + " over the built-in defaults"
	}
}
