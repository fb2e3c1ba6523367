package sandbox

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// sexp is a parsed SBPL form: an atom, a string, a regex or a list.
type sexp struct {
	atom, str string
	regex     *regexp.Regexp
	isStr     bool
	list      []sexp
	isList    bool
}

// parseSBPL reads a profile as SBPL's reader would (the subset we write:
// lists, atoms, "strings" with \\ and \" escapes, #"regexes"), failing on
// anything unbalanced.
func parseSBPL(t *testing.T, src string) []sexp {
	t.Helper()
	i := 0
	var read func() (sexp, bool)
	readStr := func() string {
		var b strings.Builder
		i++ // the opening quote
		for i < len(src) && src[i] != '"' {
			if src[i] == '\\' && i+1 < len(src) {
				i++
			}
			b.WriteByte(src[i])
			i++
		}
		if i >= len(src) {
			t.Fatalf("unterminated string in:\n%s", src)
		}
		i++
		return b.String()
	}
	read = func() (sexp, bool) {
		for i < len(src) && strings.ContainsRune(" \n\t", rune(src[i])) {
			i++
		}
		if i >= len(src) {
			return sexp{}, false
		}
		switch c := src[i]; {
		case c == '(':
			i++
			var l []sexp
			for {
				for i < len(src) && strings.ContainsRune(" \n\t", rune(src[i])) {
					i++
				}
				if i >= len(src) {
					t.Fatalf("unbalanced profile:\n%s", src)
				}
				if src[i] == ')' {
					i++
					return sexp{list: l, isList: true}, true
				}
				x, _ := read()
				l = append(l, x)
			}
		case c == ')':
			t.Fatalf("stray ) at %d:\n%s", i, src)
		case c == '"':
			return sexp{str: readStr(), isStr: true}, true
		case c == '#' && i+1 < len(src) && src[i+1] == '"':
			i++
			return sexp{regex: regexp.MustCompile(readStr())}, true
		}
		start := i
		for i < len(src) && !strings.ContainsRune(" \n\t()\"", rune(src[i])) {
			i++
		}
		return sexp{atom: src[start:i]}, true
	}
	var forms []sexp
	for {
		x, ok := read()
		if !ok {
			return forms
		}
		forms = append(forms, x)
	}
}

// decide evaluates a profile for one operation on one path, SBPL's way:
// the last rule whose operation and filters match decides; with none, the
// default. op is "file-read", "file-write" or "unix-connect".
func decide(forms []sexp, op, path string) bool {
	verdict := false
	opMatches := func(name string) bool {
		switch op {
		case "file-read":
			return name == "file-read*" || name == "default"
		case "file-write":
			return name == "file-write*" || name == "file-write-data" || name == "default"
		case "unix-connect":
			return name == "network*" || name == "network-outbound" || name == "default"
		}
		return false
	}
	var filterMatches func(f sexp) bool
	filterMatches = func(f sexp) bool {
		if !f.isList || len(f.list) == 0 {
			return false
		}
		arg := sexp{}
		if len(f.list) > 1 {
			arg = f.list[1]
		}
		switch f.list[0].atom {
		case "subpath":
			return path == arg.str || strings.HasPrefix(path, strings.TrimSuffix(arg.str, "/")+"/")
		case "literal", "path-literal":
			return path == arg.str
		case "regex":
			return arg.regex != nil && arg.regex.MatchString(path)
		case "remote":
			if op != "unix-connect" || len(f.list) < 2 || f.list[1].atom != "unix-socket" {
				return false
			}
			if len(f.list) == 2 {
				return true // every unix socket
			}
			return slices.ContainsFunc(f.list[2:], filterMatches)
		}
		return false
	}
	for _, f := range forms {
		if !f.isList || len(f.list) < 2 || (f.list[0].atom != "allow" && f.list[0].atom != "deny") {
			continue
		}
		var ops []string
		var filters []sexp
		for _, x := range f.list[1:] {
			if x.isList {
				filters = append(filters, x)
			} else {
				ops = append(ops, x.atom)
			}
		}
		if !slices.ContainsFunc(ops, opMatches) {
			continue
		}
		if op == "unix-connect" {
			// A network rule without a unix-socket filter is about IP.
			if !slices.ContainsFunc(filters, func(x sexp) bool {
				return len(x.list) > 1 && x.list[0].atom == "remote" && x.list[1].atom == "unix-socket"
			}) &&
				!slices.Contains(ops, "default") {
				continue
			}
		}
		if len(filters) > 0 && !slices.ContainsFunc(filters, filterMatches) {
			continue
		}
		verdict = f.list[0].atom == "allow"
	}
	return verdict
}

// taskSpec is a sandboxed task's Spec, as sandboxSpec makes it.
func taskSpec(project string) Spec {
	state := "/Users/u/.local/state/runner"
	return Spec{
		Writable: []string{project, "/Users/u/.claude", project + "/.git"},
		Pinned:   []string{project + "/.git"},
		Hidden:   []string{state},
		Masked:   []string{"/private/tmp/tmux-501/default"},
		ReadOnly: []string{project + "/.git/config", project + "/.git/hooks", "/Users/u/.config/runner/config.json"},
		Open:     []string{state + "/tasks/t_1.events"},
		OpenRO:   []string{state + "/tasks/t_1.hook-dir", state + "/tasks/t_1.door-dir"},
		Sockets:  []string{state + "/tasks/t_1.door-dir/door.sock"},
	}
}

// TestSeatbeltProfileHolds evaluates the profile of a task's spec as the
// kernel would (last match wins) for what an agent tries: it writes its
// project, but not git's config or hooks, not the folder of git itself,
// not runner's state, not the user's files; it reads runner's state only
// through its openings; it connects to its door and DNS, not to tmux.
func TestSeatbeltProfileHolds(t *testing.T) {
	project := "/Users/u/src/app"
	prof, err := SeatbeltProfile(taskSpec(project), "/private/var/folders/x/T/runner-tasks-501/t_1")
	if err != nil {
		t.Fatal(err)
	}
	forms := parseSBPL(t, prof)
	state := "/Users/u/.local/state/runner"
	for _, tc := range []struct {
		op, path string
		want     bool
	}{
		{"file-write", project + "/main.go", true},
		{"file-write", project + "/.git/objects/ab/cdef", true},
		{"file-write", project + "/.git/config", false},
		{"file-write", project + "/.git/hooks/pre-commit", false},
		{"file-write", project + "/.git", false}, // renamed or removed
		{"file-write", "/Users/u/.claude/settings.json", true},
		{"file-write", "/Users/u/.bashrc", false},
		{"file-write", "/Users/u/.config/runner/config.json", false},
		{"file-write", "/private/tmp/x", false},
		{"file-write", "/private/var/folders/x/T/runner-tasks-501/t_1/tmp.123", true},
		{"file-write", "/private/var/folders/x/T/other", false},
		{"file-write", "/dev/null", true},
		{"file-write", "/dev/ttys004", true},
		{"file-write", "/dev/disk0", false},
		{"file-write", state + "/state.json", false},
		{"file-read", state + "/state.json", false},
		{"file-write", state + "/tasks/t_1.events", true},
		{"file-read", state + "/tasks/t_1.hook-dir/settings.json", true},
		{"file-write", state + "/tasks/t_1.hook-dir/settings.json", false},
		{"file-read", "/Users/u/.ssh/id_ed25519", true}, // the whole file system is readable, as under bwrap
		{"file-read", "/private/tmp/tmux-501/default", false},
		{"unix-connect", state + "/tasks/t_1.door-dir/door.sock", true},
		{"unix-connect", "/private/var/run/mDNSResponder", true},
		{"unix-connect", "/private/tmp/tmux-501/default", false},
		{"unix-connect", "/private/tmp/tmux-501/other", false},
		{"unix-connect", "/private/tmp/com.apple.launchd.x/Listeners", false},
	} {
		if got := decide(forms, tc.op, tc.path); got != tc.want {
			t.Errorf("%s %s: allowed %v, want %v", tc.op, tc.path, got, tc.want)
		}
	}
	for _, bad := range []string{"(allow default)", "launchservicesd", "(allow file-write*)\n"} {
		if strings.Contains(prof, bad) {
			t.Errorf("the profile holds %q:\n%s", bad, prof)
		}
	}
}

// TestSeatbeltHostilePaths: a project (or HOME) whose path is written to
// end the string and add rules of its own gets no more than its own
// folder: the profile parses to the same rules, the path intact.
func TestSeatbeltHostilePaths(t *testing.T) {
	for _, project := range []string{
		`/Users/u/x")(allow default)(literal "/`,
		`/Users/u/x\")(allow file-write* (subpath "/"))(deny file-read* (literal "`,
		`/Users/u/back\slash`,
		`/Users/u/paren) (allow default`,
		`/Users/u/; comment`,
	} {
		prof, err := SeatbeltProfile(taskSpec(project), "")
		if err != nil {
			t.Fatalf("%q: %v", project, err)
		}
		forms := parseSBPL(t, prof)
		base := parseSBPL(t, mustProfile(t, taskSpec("/Users/u/plain")))
		if len(forms) != len(base) {
			t.Errorf("%q: %d forms, a plain path gives %d:\n%s", project, len(forms), len(base), prof)
		}
		if !decide(forms, "file-write", project+"/main.go") {
			t.Errorf("%q: the project is not writable", project)
		}
		for _, p := range []string{"/Users/u/.bashrc", "/etc/hosts", "/Users/u/x"} {
			if decide(forms, "file-write", p) {
				t.Errorf("%q: %s is writable:\n%s", project, p, prof)
			}
		}
	}
	if _, err := SeatbeltProfile(taskSpec("/Users/u/new\nline"), ""); !errors.Is(err, ErrUnavailable) {
		t.Errorf("a path with a newline: %v, want ErrUnavailable", err)
	}
}

func mustProfile(t *testing.T, spec Spec) string {
	t.Helper()
	p, err := SeatbeltProfile(spec, "")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSeatbeltArgv(t *testing.T) {
	argv, err := SeatbeltArgv(SeatbeltProgram, Spec{Writable: []string{"/w"}}, "/t/t_1", []string{"claude", "--x"})
	if err != nil {
		t.Fatal(err)
	}
	if argv[0] != SeatbeltProgram || argv[1] != "-p" || !strings.HasPrefix(argv[2], "(version 1)") ||
		!slices.Equal(argv[3:], []string{"/usr/bin/env", "TMPDIR=/t/t_1/", "--", "claude", "--x"}) {
		t.Errorf("argv %q", argv)
	}
	if _, err := SeatbeltArgv(SeatbeltProgram, Spec{Binds: [][2]string{{"/a", "/b"}}}, "", []string{"x"}); !errors.Is(err, ErrSeatbeltBinds) {
		t.Errorf("binds: %v", err)
	}
}
