package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// SeatbeltProgram is macOS's sandbox-exec, by its absolute path (never
// looked up in a PATH the agent could have changed).
const SeatbeltProgram = "/usr/bin/sandbox-exec"

// ErrSeatbeltBinds is returned for a Spec with Binds: Seatbelt allows or
// denies what a path is, it cannot show one folder in another's place, so
// a task's copies of its CLI's directories (sandbox_home "task") cannot be
// kept on macOS.
var ErrSeatbeltBinds = errors.New("sandbox_home \"task\" needs bind mounts, which macOS's sandbox (Seatbelt) has not: use sandbox_home \"user\" there")

// seatbeltMachServices are the system services an agent's programs (node,
// git, a shell, a TLS client) look up: names, users, logging, the
// keychain (a CLI's login), certificate trust, preferences, DNS.
// LaunchServices is not among them: with it a program could open an
// application outside the sandbox.
var seatbeltMachServices = []string{
	"com.apple.system.opendirectoryd.libinfo",
	"com.apple.system.opendirectoryd.membership",
	"com.apple.system.logger",
	"com.apple.logd",
	"com.apple.system.notification_center",
	"com.apple.SecurityServer",
	"com.apple.securityd.xpc",
	"com.apple.trustd",
	"com.apple.trustd.agent",
	"com.apple.cfprefsd.daemon",
	"com.apple.cfprefsd.agent",
	"com.apple.dnssd.service",
	"com.apple.bsd.dirhelper",
	"com.apple.system.DirectoryService.libinfo_v1",
	"com.apple.coreservices.quarantine-resolver",
}

// SeatbeltProfile is spec as a Seatbelt profile (SBPL), the same promise
// as Argv's bubblewrap sandbox where macOS can keep it. SBPL takes the
// last rule that matches, so the rules follow the order of Spec's fields
// and a later one wins inside an earlier one, as Argv's binds do:
//
//   - deny by default; processes may fork and exec (their children stay
//     in the sandbox), see and signal only the sandbox's own processes
//     (no ptrace, no task port of another: the promise of --unshare-pid);
//   - every file readable, none writable but the terminal devices and
//     /dev/null; temp is the task's own folder (TMPDIR), writable: macOS
//     has no private /tmp to mount, so /tmp stays readable and
//     read-only (the promise differs there);
//   - Writable and Pinned's contents writable; a Pinned folder itself
//     cannot be renamed or removed;
//   - Hidden unreadable and unwritable; Masked files too; Readable is
//     Linux's re-binding under a private /tmp, and means nothing here;
//   - ReadOnly read-only again, Open writable again, OpenRO readable
//     again, last;
//   - the network open (the model's API), but no unix socket but the
//     door's (Sockets) and DNS's: a tmux server's socket, wherever it
//     is, an ssh-agent's, a D-Bus's are out of reach.
//
// Root has no meaning here (no user namespace). Binds cannot be kept:
// ErrSeatbeltBinds.
func SeatbeltProfile(spec Spec, temp string) (string, error) {
	if len(spec.Binds) > 0 {
		return "", ErrSeatbeltBinds
	}
	if err := seatbeltSafe(spec, temp); err != nil {
		return "", err
	}
	var b strings.Builder
	rule := func(verdict, ops string, filters ...string) {
		if len(filters) == 0 {
			return
		}
		fmt.Fprintf(&b, "(%s %s", verdict, ops)
		for _, f := range filters {
			b.WriteString("\n  " + f)
		}
		b.WriteString(")\n")
	}
	subpaths := func(paths []string) []string {
		var out []string
		for _, p := range paths {
			if filepath.IsAbs(p) {
				out = append(out, "(subpath "+sbplString(filepath.Clean(p))+")")
			}
		}
		return out
	}
	literals := func(paths []string) []string {
		var out []string
		for _, p := range paths {
			if filepath.IsAbs(p) {
				out = append(out, "(literal "+sbplString(filepath.Clean(p))+")")
			}
		}
		return out
	}
	b.WriteString("(version 1)\n(deny default)\n")
	b.WriteString("(allow process-fork)\n(allow process-exec)\n")
	b.WriteString("(allow process-info* (target same-sandbox))\n(allow signal (target same-sandbox))\n")
	b.WriteString("(allow mach-priv-task-port (target same-sandbox))\n")
	b.WriteString("(allow sysctl-read)\n(allow user-preference-read)\n(allow iokit-get-properties)\n")
	b.WriteString("(allow ipc-posix-shm)\n(allow ipc-posix-sem)\n(allow pseudo-tty)\n")
	var mach []string
	for _, s := range seatbeltMachServices {
		mach = append(mach, "(global-name "+sbplString(s)+")")
	}
	rule("allow", "mach-lookup", mach...)
	b.WriteString("(allow file-read*)\n")
	b.WriteString("(allow file-write-data file-ioctl\n  (literal \"/dev/null\")\n  (literal \"/dev/zero\")\n  (literal \"/dev/tty\")\n  (literal \"/dev/dtracehelper\")\n  (regex #\"^/dev/ttys[0-9]+$\")\n  (regex #\"^/dev/fd/\"))\n")
	var writable []string
	if temp != "" {
		writable = append(writable, temp)
	}
	writable = append(append(writable, spec.Writable...), spec.Pinned...)
	rule("allow", "file-write*", subpaths(writable)...)
	rule("deny", "file-write*", literals(spec.Pinned)...)
	rule("deny", "file-read* file-write*", subpaths(spec.Hidden)...)
	rule("deny", "file-read* file-write*", literals(spec.Masked)...)
	rule("deny", "file-write*", subpaths(spec.ReadOnly)...)
	rule("allow", "file-read* file-write*", subpaths(spec.Open)...)
	rule("allow", "file-read*", subpaths(spec.OpenRO)...)
	b.WriteString("(allow network*)\n(deny network* (remote unix-socket))\n")
	sockets := []string{"(path-literal \"/private/var/run/mDNSResponder\")"}
	for _, p := range spec.Sockets {
		if filepath.IsAbs(p) {
			sockets = append(sockets, "(path-literal "+sbplString(filepath.Clean(p))+")")
		}
	}
	fmt.Fprintf(&b, "(allow network-outbound (remote unix-socket\n  %s))\n", strings.Join(sockets, "\n  "))
	return b.String(), nil
}

// SeatbeltArgv returns the command line that runs cmd under sandbox-exec
// (the program at prog) with spec's profile, TMPDIR set to temp (the
// task's own temp folder, writable).
func SeatbeltArgv(prog string, spec Spec, temp string, cmd []string) ([]string, error) {
	profile, err := SeatbeltProfile(spec, temp)
	if err != nil {
		return nil, err
	}
	argv := []string{prog, "-p", profile, "/usr/bin/env"}
	if temp != "" {
		argv = append(argv, "TMPDIR="+filepath.Clean(temp)+"/")
	}
	argv = append(argv, "--")
	return append(argv, cmd...), nil
}

// sbplString quotes s as an SBPL string: a backslash and a double quote
// escaped, so no path can end the string and add a rule of its own. A
// control character (which a path may hold) is not written: SeatbeltProfile
// refuses such a path first (seatbeltSafe).
func sbplString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			b.WriteByte('?')
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// seatbeltSafe fails for a path of spec with a control character: no
// escape of SBPL's is known to hold one, and a path written otherwise
// would name another.
func seatbeltSafe(spec Spec, temp string) error {
	lists := [][]string{{temp}, spec.Readable, spec.Writable, spec.Pinned, spec.Hidden, spec.Masked, spec.ReadOnly, spec.Open, spec.OpenRO, spec.Sockets}
	for _, l := range lists {
		for _, p := range l {
			if strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				return fmt.Errorf("%w: the path %q has a control character, which macOS's sandbox profile cannot name (rename it)", ErrUnavailable, p)
			}
		}
	}
	return nil
}
