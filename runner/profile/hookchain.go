package profile

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
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
// environment is kv (KEY=VALUE; later entries win). Nil when the user has
// none.
func UserHookChain(h *Hook, kv []string) ([]string, error) {
	if h == nil || h.ChainUser == "" {
		return nil, nil
	}
	get := func(k string) string {
		if v, ok := envValue(kv, k); ok {
			return v
		}
		return os.Getenv(k)
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
		return CodexNotify(filepath.Join(home, "config.toml"))
	}
	return nil, fmt.Errorf("hook: unknown chain_user %q (known: %q)", h.ChainUser, ChainCodexNotify)
}

// CodexNotify reads the top-level `notify = [...]` array of strings from a
// Codex config.toml. A missing file or key gives nil. Only what Codex's
// own docs show for notify is read (an array of basic or literal strings,
// on one line or several, before the first table header); anything else
// is an error naming the file, so that the user's program is never
// silently dropped.
func CodexNotify(path string) ([]string, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return codexNotify(f, path)
}

// codexNotify reads notify from a config.toml's text r (named path in
// errors): see CodexNotify.
func codexNotify(r io.Reader, path string) ([]string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	var val strings.Builder
	in := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !in {
			if strings.HasPrefix(line, "[") {
				return nil, nil // a table: notify is top-level only
			}
			k, v, ok := strings.Cut(line, "=")
			if !ok || strings.Trim(strings.TrimSpace(k), `"'`) != "notify" {
				continue
			}
			in = true
			line = strings.TrimSpace(v)
		}
		val.WriteString(line)
		val.WriteString("\n")
		if argv, done, err := parseTOMLStrings(val.String()); done {
			if err != nil {
				return nil, fmt.Errorf("%s: notify: %w", path, err)
			}
			return argv, nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if in {
		return nil, fmt.Errorf("%s: notify: the array is not closed", path)
	}
	return nil, nil
}

// parseTOMLStrings parses a TOML array of strings, s starting at its '['.
// done is false while the array is not closed yet (more lines to come).
func parseTOMLStrings(s string) (out []string, done bool, err error) {
	if !strings.HasPrefix(s, "[") {
		return nil, true, errors.New("want an array of strings, like notify = [\"notify-send\", \"Codex\"]")
	}
	i := 1
	for {
		for i < len(s) && strings.ContainsRune(" \t\r\n,", rune(s[i])) {
			i++
		}
		if i < len(s) && s[i] == '#' { // a comment to the end of the line
			for i < len(s) && s[i] != '\n' {
				i++
			}
			continue
		}
		if i >= len(s) {
			return nil, false, nil
		}
		switch s[i] {
		case ']':
			return out, true, nil
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, true, errors.New("unterminated literal string")
			}
			out = append(out, s[i+1:i+1+j])
			i += j + 2
		case '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return nil, true, errors.New("unterminated string")
			}
			var v string
			if err := json.Unmarshal([]byte(s[i:j+1]), &v); err != nil {
				return nil, true, fmt.Errorf("string %s: %w", s[i:j+1], err)
			}
			out = append(out, v)
			i = j + 1
		default:
			return nil, true, fmt.Errorf("unexpected %q: only strings are allowed in notify", s[i])
		}
	}
}

// MergeJSONEnv merges each of the hook's KEY=VALUE (a JSON object) into the
// value the agent's environment kv already gives KEY, if any: the user's
// keys are kept, and where both give an array (OpenCode's "plugin" list)
// the hook's items are added after the user's. A user's value that is not
// a JSON object is an error naming the variable.
func MergeJSONEnv(kv, hook []string) ([]string, error) {
	out := make([]string, 0, len(hook))
	for _, e := range hook {
		k, v, _ := strings.Cut(e, "=")
		user, _ := envValue(kv, k)
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

// envValue is the value of k in kv (KEY=VALUE entries; the last wins).
func envValue(kv []string, k string) (string, bool) {
	for i := len(kv) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(kv[i], k+"="); ok {
			return v, true
		}
	}
	return "", false
}
