// The modes of --permissions: each CLI's asking mode, chosen by its version.

package profile

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/runner-cli/runner/runner/fault"
)

// The values of dispatch --permissions (and the config's permissions).
const (
	// PermissionsAsk starts the agent in its asking mode (PermissionsAsk
	// of its profile, by version): every tool call that is not a plain
	// read asks, --approve-rule rules decide, and what none decides is
	// needs_input.
	PermissionsAsk = "ask"
	// PermissionsAuto starts the agent in its own auto-approval mode
	// (PermissionsAutoArgs).
	PermissionsAuto = "auto"
	// PermissionsDefault passes no mode: the CLI's own default, whatever
	// its version and the user's settings make it.
	PermissionsDefault = "default"
)

// PermissionsModes are the values --permissions accepts.
var PermissionsModes = []string{PermissionsAsk, PermissionsAuto, PermissionsDefault}

// DefaultPermissions is runner's --permissions when neither the flag nor
// the config sets one: ask, so that an agent does the same with every
// version of its CLI (a CLI whose newer default approves on its own does
// not widen what a task may do unasked), and --approve-rule rules and
// needs_input see every tool call that is not a read. A CLI with no asking
// mode (pi, the shell) then runs in its own default, said by `runner
// agents show`.
const DefaultPermissions = PermissionsAsk

// Permissions is the --permissions mode a dispatch of prof runs in:
// the flag's (mode), else the config's (fallback), else runner's default
// (DefaultPermissions). Without the flag, ask falls back to the
// CLI's own default for a profile without an asking mode (pi, the
// shell); the flag's ask of such a profile is refused (exit 2).
func Permissions(prof *Profile, mode, fallback string) (string, error) {
	if mode == "" {
		mode = cmp.Or(fallback, DefaultPermissions)
		if mode == PermissionsAsk && len(prof.PermissionsAsk) == 0 {
			return PermissionsDefault, nil
		}
		return mode, nil
	}
	if err := CheckPermissions("--permissions", mode); err != nil {
		return "", err
	}
	if mode == PermissionsAsk && len(prof.PermissionsAsk) == 0 {
		_, err := prof.AskModeFor("")
		return "", err
	}
	return mode, nil
}

// CheckPermissions checks a --permissions value (or the config's): one of
// PermissionsModes.
func CheckPermissions(key, mode string) error {
	if slices.Contains(PermissionsModes, mode) {
		return nil
	}
	return fault.Usagef("%s must be ask, auto or default, not %q (ask: the CLI's asking mode; auto: its auto-approval mode; default: its own default)", key, mode)
}

// AskMode is a CLI's asking mode for a range of its versions: the
// arguments and variables that make every tool call that is not a plain
// read ask.
type AskMode struct {
	// Since is the first version of the range and Before the first one
	// after it ("2.1.200"); empty: unbounded.
	Since  string `json:"since,omitempty"`
	Before string `json:"before,omitempty"`
	// Args are appended to the launch argv; Env is added to the pane's
	// environment. Both empty: the CLI's own default asks.
	Args []string          `json:"args,omitempty"`
	Env  map[string]string `json:"env,omitempty"`
	// Doc says what asks in this mode, and what the CLI's own default
	// does in these versions.
	Doc string `json:"doc"`
}

// Range is the versions m holds, for humans: "all versions", ">= 2.1.200",
// "< 2.1.200", ">= 2.1.200, < 2.1.283".
func (m AskMode) Range() string {
	var parts []string
	if m.Since != "" {
		parts = append(parts, ">= "+m.Since)
	}
	if m.Before != "" {
		parts = append(parts, "< "+m.Before)
	}
	if len(parts) == 0 {
		return "all versions"
	}
	return strings.Join(parts, ", ")
}

// holds reports whether version is in m's range; ok is false when a bound
// applies and version has no number.
func (m AskMode) holds(version string) (in, ok bool) {
	if m.Since != "" {
		c, ok := CompareVersions(version, m.Since)
		if !ok {
			return false, false
		}
		if c < 0 {
			return false, true
		}
	}
	if m.Before != "" {
		c, ok := CompareVersions(version, m.Before)
		if !ok {
			return false, false
		}
		if c >= 0 {
			return false, true
		}
	}
	return true, true
}

// AskNeedsVersion reports whether the asking mode depends on the CLI's
// version (an entry of PermissionsAsk has a bound): the installed version
// must be read before the launch.
func (p *Profile) AskNeedsVersion() bool {
	return slices.ContainsFunc(p.PermissionsAsk, func(m AskMode) bool { return m.Since != "" || m.Before != "" })
}

// AskModeFor returns the asking mode for the CLI's version (the output of
// its version_args, or "" when AskNeedsVersion is false): the first entry
// of PermissionsAsk whose range holds it. The error (exit 2) says why there
// is none: the profile has no asking mode, the version was not read, or no
// entry holds it.
func (p *Profile) AskModeFor(version string) (AskMode, error) {
	if len(p.PermissionsAsk) == 0 {
		why := "the profile sets no \"permissions_ask\""
		if p.PermissionsAutoDoc != "" {
			why = p.PermissionsAutoDoc
		}
		return AskMode{}, fault.Usagef("agent %s has no asking mode (%s): --permissions ask is not available; use --permissions default or auto", p.Name, why)
	}
	unread := false
	for _, m := range p.PermissionsAsk {
		in, ok := m.holds(version)
		if !ok {
			unread = true
			continue
		}
		if in {
			return m, nil
		}
	}
	if unread {
		return AskMode{}, fault.Usagef("agent %s: its asking mode depends on its version, and %q names none (check '%s %s', or use --permissions default or auto)",
			p.Name, version, p.BinaryName(), strings.Join(p.VersionArgs, " "))
	}
	return AskMode{}, fault.Usagef("agent %s %s has no asking mode known to runner (the profile's permissions_ask covers %s): use --permissions default or auto, or add the version's mode to an agent file",
		p.Name, version, p.askRanges())
}

func (p *Profile) askRanges() string {
	var rs []string
	for _, m := range p.PermissionsAsk {
		rs = append(rs, m.Range())
	}
	return strings.Join(rs, "; ")
}

// checkPermissionsAsk checks the entries of PermissionsAsk: their bounds
// are versions, each has a doc.
func (p *Profile) checkPermissionsAsk() error {
	for i, m := range p.PermissionsAsk {
		key := fmt.Sprintf("permissions_ask[%d]", i)
		for name, v := range map[string]string{"since": m.Since, "before": m.Before} {
			if v != "" && !versionRE.Re().MatchString(v) {
				return keyErrorf(p.Name, key+"."+name, "%q is no version (want e.g. \"2.1.200\")", v)
			}
		}
		if m.Since != "" && m.Before != "" {
			if c, _ := CompareVersions(m.Since, m.Before); c >= 0 {
				return keyErrorf(p.Name, key, "empty range: since %s is not before %s", m.Since, m.Before)
			}
		}
		if strings.TrimSpace(m.Doc) == "" {
			return keyErrorf(p.Name, key+".doc", "empty: say what asks in this mode")
		}
		for _, k := range slices.Sorted(maps.Keys(m.Env)) {
			if k == "" || strings.ContainsAny(k, "= ") {
				return keyErrorf(p.Name, key+".env", "bad variable name %q", k)
			}
		}
	}
	return nil
}

// EnvList is m's Env as KEY=VALUE, sorted by key.
func (m AskMode) EnvList() []string {
	out := make([]string, 0, len(m.Env))
	for _, k := range slices.Sorted(maps.Keys(m.Env)) {
		out = append(out, k+"="+m.Env[k])
	}
	return out
}
