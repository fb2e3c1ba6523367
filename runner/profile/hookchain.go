package profile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
)

// Where runner finds a user's own program for a hook that the CLI allows
// only once (Hook.ChainUser).
const (
	// ChainCodexNotify is the top-level `notify` array of Codex's
	// config.toml ($CODEX_HOME/config.toml, by default ~/.codex): runner's
	// `-c notify=…` replaces it for the session, so runner's notify
	// program runs the user's after its own, with the same event argument.
	ChainCodexNotify = "codex-notify"
)

// UserHookChain returns the user's own program that the hook h would
// replace, read from where h.ChainUser says, for an agent whose
// environment is kv (KEY=VALUE; later entries win) over getenv's
// (os.Getenv). read reads a file (os.ReadFile: the caller's, for profile
// opens none). Nil when the user has none.
func UserHookChain(h *Hook, kv []string, getenv func(string) string, read func(string) ([]byte, error)) ([]string, error) {
	if h == nil || h.ChainUser == "" {
		return nil, nil
	}
	get := func(k string) string {
		if v, ok := EnvValue(kv, k); ok {
			return v
		}
		return getenv(k)
	}
	switch h.ChainUser {
	case ChainCodexNotify:
		home := get("CODEX_HOME")
		if home == "" {
			if h := get("HOME"); h != "" {
				home = filepath.Join(h, ".codex")
			}
		}
		if home == "" {
			return nil, nil
		}
		return CodexNotify(filepath.Join(home, "config.toml"), read)
	}
	return nil, fmt.Errorf("hook: unknown chain_user %q (known: %q)", h.ChainUser, ChainCodexNotify)
}

// CodexNotify reads the top-level `notify = [...]` array of strings from a
// Codex config.toml. A missing file or key gives nil. The file is read
// with the TOML library as Codex reads it, whole: a file that is not
// valid TOML, or a notify that is not an array of strings, is an error
// naming the file and the line, so that the user's program is never
// silently dropped. read reads the file (os.ReadFile).
func CodexNotify(path string, read func(string) ([]byte, error)) ([]string, error) {
	data, err := read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return codexNotify(bytes.NewReader(data), path)
}

// codexNotify reads notify from a config.toml's text r (named path in
// errors): see CodexNotify.
func codexNotify(r io.Reader, path string) ([]string, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxCodexConfig+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxCodexConfig {
		return nil, fmt.Errorf("%s: larger than %d bytes: not read for notify (is it Codex's config.toml?)", path, maxCodexConfig)
	}
	doc, err := parseTOML(data)
	if err != nil {
		var fe *FileError
		if errors.As(err, &fe) {
			fe.File = path
		}
		return nil, fmt.Errorf("%w (Codex cannot read it either: fix the file)", err)
	}
	notify, ok := doc.values["notify"]
	if !ok {
		return nil, nil
	}
	items, ok := notify.([]any)
	if !ok {
		return nil, &FileError{File: path, Line: doc.line("notify"), Key: "notify",
			Err: fmt.Errorf("want an array of strings, like notify = [\"notify-send\", \"Codex\"], not %s", tomlTypeName(notify))}
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		s, ok := it.(string)
		if !ok {
			k := fmt.Sprintf("notify[%d]", i)
			return nil, &FileError{File: path, Line: doc.line(k), Key: k, Err: fmt.Errorf("only strings are allowed in notify, not %s", tomlTypeName(it))}
		}
		out = append(out, s)
	}
	return out, nil
}

// maxCodexConfig bounds the config.toml read for its notify.
const maxCodexConfig = 4 << 20

// MergeJSONEnv merges each of the hook's KEY=VALUE (a JSON object) into the
// value the agent's environment kv already gives KEY, if any: the user's
// keys are kept, and where both give an array (OpenCode's "plugin" list)
// the hook's items are added after the user's. A user's value that is not
// a JSON object is an error naming the variable.
func MergeJSONEnv(kv, hook []string) ([]string, error) {
	out := make([]string, 0, len(hook))
	for _, e := range hook {
		k, v, _ := strings.Cut(e, "=")
		user, _ := EnvValue(kv, k)
		if strings.TrimSpace(user) == "" {
			out = append(out, e)
			continue
		}
		var u, h map[string]any
		if err := json.Unmarshal([]byte(user), &u); err != nil || u == nil {
			return nil, fmt.Errorf("%s in your environment is not a JSON object (%v), so runner cannot add its own settings to it", k, err)
		}
		if err := json.Unmarshal([]byte(v), &h); err != nil {
			return nil, fmt.Errorf("hook env %s: %w", k, err)
		}
		for hk, hv := range h {
			ua, uok := u[hk].([]any)
			ha, hok := hv.([]any)
			switch {
			case uok && hok:
				u[hk] = append(ua, ha...)
			case u[hk] == nil:
				u[hk] = hv
			}
		}
		b, err := json.Marshal(u)
		if err != nil {
			return nil, err
		}
		out = append(out, k+"="+string(b))
	}
	return out, nil
}

// EnvValue is the value of k in kv (KEY=VALUE entries; the last wins).
func EnvValue(kv []string, k string) (string, bool) {
	for i := len(kv) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(kv[i], k+"="); ok {
			return v, true
		}
	}
	return "", false
}
