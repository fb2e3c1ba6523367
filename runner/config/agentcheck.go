package config

import (
	"fmt"
	"path/filepath"
	"strings"
)

// AgentFilesIn are the agent files in dir (every NAME.toml), sorted.
func AgentFilesIn(dir string) ([]string, error) {
	return filepath.Glob(filepath.Join(dir, "*.toml"))
}

// CheckAgentFiles checks each file alone (CheckAgentFile); bad counts
// those that are not valid.
func CheckAgentFiles(files []string) (checks []AgentFileCheck, bad int) {
	checks = make([]AgentFileCheck, 0, len(files))
	for _, f := range files {
		c := CheckAgentFile(f)
		if !c.OK {
			bad++
		}
		checks = append(checks, c)
	}
	return checks, bad
}

// Line is one file's result for people: "ok" with what it does and the
// keys it sets, or "bad" with the error.
func (c AgentFileCheck) Line() string {
	if !c.OK {
		return "bad  " + c.Error.Error()
	}
	what := "defines the new agent " + c.Agent
	if c.Overrides {
		what = "overrides the built-in agent " + c.Agent
	}
	return fmt.Sprintf("ok   %s: %s (%s)", c.File, what, strings.Join(c.Keys, ", "))
}
