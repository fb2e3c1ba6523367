package doctor

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/runner-cli/runner/internal/subproc"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/profile"
)

// SelfBinary is the Command[0] (and Binary) that means the runner's own
// executable (the sim profile): it is replaced by the runner's absolute path.
const SelfBinary = "runner"

// AgentStatus says whether a profile's CLI is installed, where and which
// version.
type AgentStatus struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Command     []string `json:"command"`
	Binary      string   `json:"binary"`
	Installed   bool     `json:"installed"`
	Path        string   `json:"path,omitempty"`
	Version     string   `json:"version,omitempty"`
	// VersionError says why the version could not be read, if it could not.
	VersionError string `json:"version_error,omitempty"`
	// Hook says how the end of a turn is known: the profile's turn-end hook
	// (and its answer), or "none" (the screen only).
	Hook string `json:"hook"`
	// Ask is what --permissions ask (runner's default) passes this CLI:
	// its asking mode for the installed version (see AskSummary).
	Ask string `json:"ask"`
	// VerifiedVersion is the version the profile was checked on;
	// Unverified says why it never was (profile.Profile's).
	VerifiedVersion string `json:"verified_version,omitempty"`
	Unverified      string `json:"unverified,omitempty"`
}

// AskSummary is what `runner agents` says of --permissions ask for a
// profile's CLI at version ("" when not read): the arguments and variables
// of its asking mode and what asks there, or why there is none.
func AskSummary(p *profile.Profile, version string) string {
	if len(p.PermissionsAsk) == 0 {
		return "none: runner's default runs it in its own default mode; --permissions ask exits 2"
	}
	if version == "" && p.AskNeedsVersion() {
		return "by version (version not read): see 'runner agents show " + p.Name + "'"
	}
	m, err := p.AskModeFor(version)
	if err != nil {
		return "none for this version: " + err.Error()
	}
	how := strings.Join(append(append([]string(nil), m.Args...), m.EnvList()...), " ")
	if how == "" {
		how = "nothing passed"
	}
	return how + ": " + m.Doc
}

// HookSummary is what `runner agents` says of a profile's turn-end hook.
func HookSummary(p *profile.Profile) string {
	if p.Hook == nil {
		return "none: the end of a turn and the answer come from the screen"
	}
	return p.Hook.Doc
}

// VersionTimeout bounds one `<cli> --version` run in CheckAgents.
const VersionTimeout = 3 * time.Second

var versionRE = textutil.LazyRegexp(`\d+\.\d+(\.\d+)?([-+.][0-9A-Za-z.-]+)?`)

// CheckAgents looks each profile's binary up in PATH and, when found and
// withVersion is set, runs its VersionArgs (concurrently, each bounded by
// VersionTimeout) to read a version. self is the runner's own executable,
// reported for profiles whose binary is SelfBinary.
func CheckAgents(ctx context.Context, ps []*profile.Profile, self string, withVersion bool) []AgentStatus {
	out := make([]AgentStatus, len(ps))
	var wg sync.WaitGroup
	for i, p := range ps {
		st := AgentStatus{Name: p.Name, Description: p.Description, Command: p.Command, Binary: p.BinaryName(), Hook: HookSummary(p), Ask: AskSummary(p, ""),
			VerifiedVersion: p.VerifiedVersion, Unverified: p.Unverified}
		if st.Binary == SelfBinary && self != "" {
			st.Installed, st.Path = true, self
			out[i] = st
			continue
		}
		path, err := exec.LookPath(st.Binary)
		if err != nil {
			out[i] = st
			continue
		}
		st.Installed, st.Path = true, path
		out[i] = st
		if !withVersion || len(p.VersionArgs) == 0 {
			continue
		}
		wg.Add(1)
		go func(i int, args []string) {
			defer wg.Done()
			v, err := ReadVersion(ctx, path, args)
			if err != nil {
				out[i].VersionError = err.Error()
				return
			}
			out[i].Version, out[i].Ask = v, AskSummary(p, v)
		}(i, p.VersionArgs)
	}
	wg.Wait()
	return out
}

// ReadVersion runs the CLI at path with args (its profile's VersionArgs),
// bounded by VersionTimeout, and returns the version it prints (see
// ParseVersion); the error names the command and its stderr.
func ReadVersion(ctx context.Context, path string, args []string) (string, error) {
	return readVersion(ctx, path, args, VersionTimeout)
}

// readVersion is ReadVersion bounded by timeout.
func readVersion(ctx context.Context, path string, args []string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := subproc.Command(ctx, path, args...)
	// A temporary directory of its own, removed after: opencode and kilo
	// (bun binaries) extract their native libraries (5-13 MB) to it at
	// every start, --version's too, and never remove them.
	if tmp, err := os.MkdirTemp("", "runner-version-"); err == nil {
		defer os.RemoveAll(tmp)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := subproc.Output(cmd)
	if ctx.Err() != nil {
		return "", fmt.Errorf("%s %s: timed out after %s", path, strings.Join(args, " "), timeout)
	}
	if err != nil {
		// The error (a *subproc.Error) ends with stderr's last line.
		return "", fmt.Errorf("%s %s: %w", path, strings.Join(args, " "), err)
	}
	return ParseVersion(string(out) + stderr.String()), nil
}

// ParseVersion is the version in a CLI's --version output: its first
// dotted number ("2.1.332" of "2.1.332 (Claude Code)"), else its first
// line.
func ParseVersion(text string) string {
	if v := versionRE.Re().FindString(text); v != "" {
		return v
	}
	return textutil.FirstLine(strings.TrimSpace(text))
}
