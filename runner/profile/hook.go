// The turn-end hook a profile installs: its settings, paths and the
// environment and files it hands the agent.

package profile

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/runner-cli/runner/internal/transport"
)

// Hook describes an agent's own turn-end notification, as data. Two
// commands can be placed in its templates: the runner's hook command line
// (the runner's absolute path, "hook --task ID", for a CLI that needs a
// program with arguments) and the appender, `{ cat; echo; } >> EVENTS`, a
// shell command line that appends its stdin as one line to the task's
// events file (for a CLI that runs its hook through sh and gives the event
// as one line of JSON on stdin: no process of the runner's starts).
//
// Kind "settings-file": the runner writes Settings to a file (mode 0600)
// named File in the task's hook directory (default "<task>.json"), with
// "{command}" and "{append}" replaced by those command lines as JSON
// strings and "{events}" by the events file's path as a JSON string; Args
// are appended to the launch argv and Env added to the agent's
// environment, "{file}" replaced by the file's path and "{dir}" by the
// task's hook directory.
//
// Kind "flag": the runner appends Args to the launch argv with "{command}"
// replaced by the hook command line as one argument, "{append}" by the
// appender, and "{command_str}", "{append_str}" by the same escaped for the
// inside of a double-quoted JSON or TOML string (for a flag whose value is
// such a document, as Codex's -c).
type Hook struct {
	// Kind is HookKindSettingsFile or HookKindFlag.
	Kind string `json:"kind"`
	// Args are appended to the launch argv, placeholders filled.
	Args []string `json:"args,omitempty"`
	// Env is added to the agent's environment, placeholders filled (a
	// CLI that finds an extra settings file or directory through a
	// variable): "{file}" is the settings file's path, "{file_url}" the
	// same as a file:// URL (safe inside a JSON string), "{dir}" the
	// task's hook directory.
	Env map[string]string `json:"env,omitempty"`
	// File is the settings file's path relative to the task's hook
	// directory (settings-file hooks; default "settings.json"). A name
	// ending in .json must give valid JSON.
	File string `json:"file,omitempty"`
	// Settings is the settings file template (settings-file hooks).
	Settings string `json:"settings,omitempty"`
	// Files are more files the CLI needs beside the settings file (a
	// plugin's manifest): path relative to the task's hook directory →
	// template, placeholders as in Settings (settings-file hooks).
	Files map[string]string `json:"files,omitempty"`
	// RootOwned: the CLI reads the file only when it and every directory
	// above it are owned by root and not writable by group or others
	// (Gemini CLI's system files); where that does not hold the hook is
	// left out and the screen ends the turn.
	RootOwned bool `json:"root_owned,omitempty"`
	// EnvMergeJSON: Env values are JSON objects, merged into a value the
	// user's environment already gives the same variable (the user's keys
	// kept, arrays concatenated), never replacing it.
	EnvMergeJSON bool `json:"env_merge_json,omitempty"`
	// ChainUser names where the user's own program for this hook is
	// found, when the CLI takes only one and runner's replaces it
	// (ChainCodexNotify). runner's program runs the user's after its own:
	// "{chain}" in Args becomes the count and the user's argv as strings.
	ChainUser string `json:"chain_user,omitempty"`
	// Grace is how long a turn whose end the screen shows waits for the
	// hook's event before the screen's word is taken: for a CLI whose
	// hook fires well after its screen settles (OpenCode's session.idle
	// comes about 0.7 s after the last frame). The hook's record carries
	// the agent's own answer. Zero: the screen's word at once.
	Grace Duration `json:"grace,omitempty"`
	// Doc says which agent event fires the hook.
	Doc string `json:"doc,omitempty"`
}

// HookPaths are what a hook's templates are filled with for one task.
type HookPaths struct {
	// Command is the runner's hook command line, shell-quoted where
	// needed ("'/usr/bin/runner' hook --task t_x").
	Command string
	// Events is the task's events file.
	Events string
	// Dir is the task's own hook directory, where the settings file goes.
	Dir string
	// Chain is the user's own program that runner's hook runs after its
	// own (Hook.ChainUser), nil when there is none.
	Chain []string
}

// Appender is the shell command line that appends its stdin, and a newline,
// to file in one open with O_APPEND: the cheapest hook there is (sh's
// builtins and one cat).
func Appender(file string) string {
	return "{ cat; echo; } >> " + transport.Quote(file)
}

// HookLaunch is what Hook.Render produces for one task: the argv to append
// to the launch argv, the environment to add, and for a settings-file hook
// the file's content (to be written, mode 0600, at SettingsPath).
type HookLaunch struct {
	Args         []string // appended to the launch argv
	Env          []string // KEY=VALUE added to the agent's environment
	Settings     []byte   // the settings file's content; nil for flag hooks
	SettingsPath string   // where Settings goes
	// Files are the hook's other files (Hook.Files), written like
	// Settings.
	Files []HookFile
}

// HookFile is one more file of a hook: its path and content.
type HookFile struct {
	Path string
	Data []byte
}

// Render fills the hook's placeholders for one task.
func (h *Hook) Render(p HookPaths) (HookLaunch, error) {
	if p.Command == "" || p.Events == "" {
		return HookLaunch{}, errors.New("hook: empty command line or events file")
	}
	appender := Appender(p.Events)
	var out HookLaunch
	fill := func(a string) string {
		u := (&url.URL{Scheme: "file", Path: out.SettingsPath}).String()
		return strings.NewReplacer("{file_url}", u, "{file}", out.SettingsPath, "{dir}", p.Dir).Replace(a)
	}
	switch h.Kind {
	case HookKindSettingsFile:
		if p.Dir == "" {
			return HookLaunch{}, errors.New("hook: settings-file hook needs a hook directory")
		}
		name := h.File
		if name == "" {
			name = "settings.json"
		}
		qc, _ := json.Marshal(p.Command)
		qa, _ := json.Marshal(appender)
		qe, _ := json.Marshal(p.Events)
		r := strings.NewReplacer("{command_str}", jsonInner(p.Command), "{append_str}", jsonInner(appender),
			"{command}", string(qc), "{append}", string(qa), "{events}", string(qe))
		var err error
		if out.SettingsPath, out.Settings, err = hookFile(p.Dir, name, h.Settings, r); err != nil {
			return HookLaunch{}, err
		}
		for _, f := range slices.Sorted(maps.Keys(h.Files)) {
			path, data, err := hookFile(p.Dir, f, h.Files[f], r)
			if err != nil {
				return HookLaunch{}, err
			}
			out.Files = append(out.Files, HookFile{Path: path, Data: data})
		}
		for _, a := range h.Args {
			out.Args = append(out.Args, fill(a))
		}
	case HookKindFlag:
		inner := jsonInner
		// {chain}: "N","arg1",…,"argN" — the user's program as strings of
		// the TOML (and JSON) array it stands in.
		chain := []string{strconv.Itoa(len(p.Chain))}
		for _, a := range p.Chain {
			q, _ := json.Marshal(a)
			chain = append(chain, string(q))
		}
		chain[0] = `"` + chain[0] + `"`
		r := strings.NewReplacer("{command_str}", inner(p.Command), "{append_str}", inner(appender),
			"{command}", p.Command, "{append}", appender, "{chain}", strings.Join(chain, ","))
		for _, a := range h.Args {
			out.Args = append(out.Args, r.Replace(a))
		}
	default:
		return HookLaunch{}, fmt.Errorf("hook: unknown kind %q (known: %q, %q)", h.Kind, HookKindSettingsFile, HookKindFlag)
	}
	keys := make([]string, 0, len(h.Env))
	for k := range h.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out.Env = append(out.Env, k+"="+fill(h.Env[k]))
	}
	return out, nil
}

// jsonInner is s as the inside of a double-quoted JSON (or TOML) string.
func jsonInner(s string) string { q, _ := json.Marshal(s); return string(q[1 : len(q)-1]) }

// hookFile renders the template of the hook file name (relative to the
// task's hook directory dir) with r: its path and content. A name ending
// in .json must give valid JSON.
func hookFile(dir, name, template string, r *strings.Replacer) (string, []byte, error) {
	if filepath.IsAbs(name) || strings.Contains(filepath.ToSlash(name), "..") {
		return "", nil, fmt.Errorf("hook: file %q must be a relative path inside the hook directory", name)
	}
	s := r.Replace(template)
	if strings.HasSuffix(name, ".json") && !json.Valid([]byte(s)) {
		return "", nil, fmt.Errorf("hook: the template of %s does not give valid JSON: %s", name, s)
	}
	return filepath.Join(dir, name), []byte(s), nil
}
