// The config's profiles and approve rules: built-ins overlaid with the
// config's, and model aliases resolved.

package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/profile"
)

// CompileApproveRules compiles approval rules (from the config or
// --approve-rule); key names them in errors ("approve_rules",
// "--approve-rule"). An empty rule is an error: it would match everything.
func CompileApproveRules(key string, rules []string) ([]*regexp.Regexp, error) {
	out := make([]*regexp.Regexp, 0, len(rules))
	for i, r := range rules {
		if r == "" {
			return nil, fmt.Errorf("%s[%d]: empty rule (it would approve every dialog)", key, i)
		}
		re, err := regexp.Compile(r)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: bad regular expression %q: %v", key, i, r, err)
		}
		out = append(out, re)
	}
	return out, nil
}

// ApproveRegexps returns the compiled ApproveRules of a config returned by
// Load or DefaultConfig.
func (c *Config) ApproveRegexps() []*regexp.Regexp { return c.approve }

// Profiles returns the built-in profiles overlaid with the user's agent
// files (AgentsDir) and then with the config's overrides ("profiles"),
// followed by the agents the files define, sorted by name, and those the
// config defines, sorted by name; every one compiled and fresh (the
// caller may keep them). The global EnterDelay applies to every profile
// whose agent file or override does not set "enter_delay".
func (c *Config) Profiles() ([]*profile.Profile, error) {
	ps := profile.Builtins()
	byName := map[string]int{}
	for i, p := range ps {
		byName[p.Name] = i
	}
	ownDelay := map[string]bool{}
	for _, f := range c.agentFiles {
		i, ok := byName[f.Name]
		var base *profile.Profile
		if ok {
			base = ps[i]
		}
		p, err := f.Apply(base)
		if err != nil {
			return nil, err
		}
		if ok {
			ps[i] = p
		} else {
			byName[p.Name] = len(ps)
			ps = append(ps, p)
		}
		ownDelay[p.Name] = f.Sets("enter_delay")
	}
	var added []*profile.Profile
	for _, name := range slices.Sorted(maps.Keys(c.ProfileOverrides)) {
		raw := c.ProfileOverrides[name]
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(raw, &keys); err != nil || keys == nil {
			return nil, fmt.Errorf("profiles.%s: want a JSON object (a partial profile: see 'runner agents show %s')", name, name)
		}
		known := profile.JSONKeys()
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			if !known[k] {
				return nil, fmt.Errorf("profiles.%s.%s: unknown key (known keys: %s)", name, k, strings.Join(profile.SortedKeys(known), ", "))
			}
		}
		if n, ok := keys["name"]; ok {
			var s string
			if json.Unmarshal(n, &s) != nil || s != name {
				return nil, fmt.Errorf("profiles.%s.name: %s differs from the key %q (leave \"name\" out)", name, n, name)
			}
		}
		var base *profile.Profile
		i, builtin := byName[name]
		if builtin {
			base = ps[i]
		}
		p, err := profile.MergeProfileFrom(c.path, name, base, raw)
		if err != nil {
			return nil, fmt.Errorf("profiles.%s: %w", name, err)
		}
		if _, ok := keys["enter_delay"]; ok {
			ownDelay[name] = true
		}
		if builtin {
			ps[i] = p
		} else {
			added = append(added, p)
		}
	}
	ps = append(ps, added...) // sorted: the names were visited in order
	if c.EnterDelay.Duration > 0 {
		for _, p := range ps {
			if !ownDelay[p.Name] {
				p.EnterDelay = c.EnterDelay
			}
		}
	}
	return ps, nil
}

// Profile returns the effective profile name (built in or defined by the
// config). An empty name means DefaultAgent. An unknown name is an error
// wrapping ErrUsage that lists the known ones.
func (c *Config) Profile(name string) (*profile.Profile, error) {
	if name == "" {
		name = c.DefaultAgent
	}
	ps, err := c.Profiles()
	if err != nil {
		return nil, fault.Usagef("%v", err)
	}
	return profile.FindProfile(ps, name)
}

// ResolveModel returns the model id for --model m with the given profile:
// the profile's alias for m, else the "*" alias, else m itself.
func (c *Config) ResolveModel(profile, m string) string {
	if id, ok := c.ModelAliases[profile][m]; ok {
		return id
	}
	if id, ok := c.ModelAliases[ModelAliasAll][m]; ok {
		return id
	}
	return m
}
