// The user's agent files: <config dir>/agents/NAME.toml, each adding an
// agent or overriding keys of a built-in one.

package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/runner-cli/runner/runner/profile"
)

// AgentsDirName is the folder beside the config file that holds the
// user's agent files.
const AgentsDirName = "agents"

// maxAgentFile bounds an agent file's size: a profile is a few KiB.
const maxAgentFile = 1 << 20

// AgentsDir returns the folder of the user's agent files: agents/ beside
// the config file that Path finds (so $RUNNER_CONFIG=/x/config.json reads
// /x/agents); "" when there is no config path.
func AgentsDir(getenv func(string) string) string {
	path, _ := Path(getenv)
	if path == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(path), AgentsDirName)
}

// ReadAgentFiles reads every NAME.toml in dir, sorted by name. A missing
// dir gives none; other files (a README, a backup claude.toml~) are left
// alone. Errors name the file (a *profile.FileError for what is in it).
func ReadAgentFiles(dir string) ([]*profile.File, error) {
	if dir == "" {
		return nil, nil
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("agent files: %w", err)
	}
	var out []*profile.File
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".toml") || e.IsDir() {
			continue
		}
		f, err := ReadAgentFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b *profile.File) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// ReadAgentFile reads and parses one agent file (see profile.ParseFile).
func ReadAgentFile(path string) (*profile.File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, &profile.FileError{File: path, Err: fmt.Errorf("cannot read it: %w", unwrapPath(err))}
	}
	defer fh.Close()
	if st, err := fh.Stat(); err == nil && st.IsDir() {
		return nil, &profile.FileError{File: path, Err: errors.New("a directory, not an agent file")}
	}
	data, err := io.ReadAll(io.LimitReader(fh, maxAgentFile+1))
	if err != nil {
		return nil, &profile.FileError{File: path, Err: fmt.Errorf("cannot read it: %w", unwrapPath(err))}
	}
	if len(data) > maxAgentFile {
		return nil, &profile.FileError{File: path, Err: fmt.Errorf("larger than %d bytes: not an agent file", maxAgentFile)}
	}
	return profile.ParseFile(path, data)
}

// unwrapPath drops the path an *fs.PathError repeats.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// AgentFiles returns the user's agent files the config was loaded with.
func (c *Config) AgentFiles() []*profile.File { return slices.Clone(c.agentFiles) }

// AgentFileCheck is what CheckAgentFile found in one agent file.
type AgentFileCheck struct {
	// File is the file's path.
	File string `json:"file"`
	// Agent is the agent it defines or overrides (its file's name).
	Agent string `json:"agent,omitempty"`
	// OK says the file is valid: runner would load it.
	OK bool `json:"ok"`
	// Overrides says the file overrides keys of a built-in agent (else it
	// defines a new agent).
	Overrides bool `json:"overrides_builtin"`
	// Keys are the top-level keys the file sets.
	Keys []string `json:"keys,omitempty"`
	// Error is what is wrong, with its line and key.
	Error *profile.FileError `json:"error,omitempty"`
}

// CheckAgentFile validates the agent file at path as Load would read it
// (alone: over the built-in agent of its name, or as a new agent; neither
// the config file nor the other agent files are applied).
func CheckAgentFile(path string) AgentFileCheck {
	out := AgentFileCheck{File: path}
	fail := func(err error) AgentFileCheck {
		var fe *profile.FileError
		if !errors.As(err, &fe) {
			fe = &profile.FileError{File: path, Err: err}
		}
		out.Error = fe
		return out
	}
	f, err := ReadAgentFile(path)
	if err != nil {
		return fail(err)
	}
	out.Agent, out.Keys = f.Name, f.Keys()
	base, err := profile.BuiltinProfile(f.Name)
	if err == nil {
		out.Overrides = true
	} else {
		base = nil
	}
	if _, err := f.Apply(base); err != nil {
		return fail(err)
	}
	out.OK = true
	return out
}
