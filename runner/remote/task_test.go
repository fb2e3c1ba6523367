package remote

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
)

func TestFilesIn(t *testing.T) {
	got := FilesIn("/home/u/.runner/tasks/t_abc")
	want := Files{Transcript: "/home/u/.runner/tasks/t_abc/log", Died: "/home/u/.runner/tasks/t_abc/pane-died",
		State: "/home/u/.runner/tasks/t_abc/state", Events: "/home/u/.runner/tasks/t_abc/state/events/t_abc.jsonl",
		HookDir: "/home/u/.runner/tasks/t_abc/hook", Door: "/home/u/.runner/tasks/t_abc/door/door.sock"}
	if got != want {
		t.Errorf("FilesIn = %+v\nwant %+v", got, want)
	}
}

// TestArgv: the host's one answer decides; what the user can fix is a
// usage error naming the host, an unreachable host is not.
func TestArgv(t *testing.T) {
	prof := &profile.Profile{Name: "claude"}
	unreachable := hosts.ErrUnreachable
	for _, tc := range []struct {
		name   string
		argv   []string
		runner string // the host's runner binary ("-": none)
		answer answer
		want   []string
		usage  string // a usage error containing this
		err    error
	}{
		{name: "ok", argv: []string{"claude", "-p"}, answer: answer{key: "sh", out: "ok\n"}, want: []string{"claude", "-p"}},
		{name: "runner is the host's", argv: []string{"runner", "sim"}, answer: answer{key: "/opt/runner", out: "ok\n"}, want: []string{"/opt/runner", "sim"}},
		{name: "no runner there", argv: []string{"runner", "sim"}, runner: "-", usage: "host box names none"},
		{name: "no command", argv: nil, usage: "profiles.claude.command"},
		{name: "no directory", argv: []string{"claude"}, answer: answer{key: "sh", out: "nodir\n"}, usage: "directory /src/app does not exist on host box"},
		{name: "no program", argv: []string{"claude"}, answer: answer{key: "sh", out: "noprog\n"}, usage: `"claude" is not installed on host box`},
		{name: "unreachable", argv: []string{"claude"}, answer: answer{key: "sh", err: unreachable}, err: unreachable},
		{name: "a strange answer", argv: []string{"claude"}, answer: answer{key: "sh", out: "Welcome!\nok\n"}, usage: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := box(tc.answer)
			if tc.runner == "-" {
				c.host.Runner = ""
			}
			orig := slices.Clone(tc.argv)
			got, err := Argv(t.Context(), c, prof, "/src/app", tc.argv)
			switch {
			case tc.want != nil:
				if err != nil || !slices.Equal(got, tc.want) {
					t.Errorf("Argv = %q, %v; want %q", got, err, tc.want)
				}
				if ran := c.ran[0]; ran[len(ran)-2] != "/src/app" || ran[len(ran)-1] != tc.want[0] {
					t.Errorf("checked %q; want the directory and the program as arguments", ran)
				}
			case tc.err != nil:
				if !errors.Is(err, tc.err) || errors.Is(err, fault.ErrUsage) {
					t.Errorf("Argv: %v; want %v, not a usage error", err, tc.err)
				}
			case tc.usage != "":
				if !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), tc.usage) {
					t.Errorf("Argv: %v; want a usage error saying %q", err, tc.usage)
				}
			default:
				if err == nil || errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "unexpected answer") {
					t.Errorf("Argv: %v; want an unexpected answer, not a usage error", err)
				}
			}
			if !slices.Equal(tc.argv, orig) {
				t.Errorf("the caller's argv changed to %q", tc.argv)
			}
		})
	}
}

func TestCLIVersion(t *testing.T) {
	c := box(answer{key: "/usr/bin/claude --version", out: "2.1.3 (Claude Code)\n"})
	if v, err := CLIVersion(t.Context(), c, "/usr/bin/claude", []string{"--version"}); v != "2.1.3" || err != nil {
		t.Errorf("CLIVersion = %q, %v; want 2.1.3", v, err)
	}
	if _, err := CLIVersion(t.Context(), c, "/usr/bin/codex", []string{"--version"}); err == nil {
		t.Error("a failed run gave no error")
	}
}

// TestPaneEnv: the task's identity and the host's files, then the
// profile's variables; nothing of this machine.
func TestPaneEnv(t *testing.T) {
	task := &state.Task{ID: "t_abc", Project: "api", Tmux: state.TmuxTarget{Host: "box"}}
	files := FilesIn("/r/t_abc")
	env := PaneEnv(task, &profile.Profile{Env: map[string]string{"B": "2", "A": "1"}}, files)
	for _, kv := range []string{"RUNNER_TASK_ID=t_abc", "RUNNER_HOST=box", "RUNNER_STATE_DIR=/r/t_abc/state",
		"RUNNER_EVENTS_FILE=/r/t_abc/state/events/t_abc.jsonl"} {
		if !slices.Contains(env, kv) {
			t.Errorf("PaneEnv lacks %s: %q", kv, env)
		}
	}
	if n := len(env); env[n-2] != "A=1" || env[n-1] != "B=2" {
		t.Errorf("PaneEnv ends %q; want the profile's variables last, sorted", env[n-2:])
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "PATH=") || strings.HasPrefix(kv, "HOME=") {
			t.Errorf("PaneEnv carries this machine's %s", kv)
		}
	}
}

// TestHook: the host's runner records the events there; where it cannot,
// no hook and the reason why.
func TestHook(t *testing.T) {
	task := &state.Task{ID: "t_abc"}
	files := FilesIn("/r/t_abc")
	sim, err := profile.BuiltinProfile("sim")
	if err != nil {
		t.Fatal(err)
	}
	c := box()
	c.host.Runner = "/opt/my runner"
	hl, _, why, err := Hook(task, c, sim, files, nil)
	if err != nil || why != "" || hl == nil {
		t.Fatalf("Hook = %v, %q, %v; want the sim's hook", hl, why, err)
	}
	if !slices.Contains(hl.Args, "'/opt/my runner' hook --task t_abc") {
		t.Errorf("hook args %q; want the host's runner, quoted", hl.Args)
	}
	for _, tc := range []struct {
		name string
		set  func(*fakeConn, *profile.Hook)
		why  string
	}{
		{"no runner there", func(c *fakeConn, _ *profile.Hook) { c.host.Runner = "" }, "names no runner binary"},
		{"the user's own program", func(_ *fakeConn, h *profile.Hook) { h.ChainUser = "codex-notify" }, "replace your own program"},
		{"root's settings", func(_ *fakeConn, h *profile.Hook) { h.RootOwned = true }, "must be root's"},
	} {
		c, h := box(), *sim.Hook
		p := *sim
		p.Hook = &h
		tc.set(c, &h)
		if hl, env, why, err := Hook(task, c, &p, files, nil); hl != nil || env != nil || err != nil || !strings.Contains(why, tc.why) {
			t.Errorf("%s: Hook = %v, %q, %q, %v; want none because %q", tc.name, hl, env, why, err, tc.why)
		}
	}
}
