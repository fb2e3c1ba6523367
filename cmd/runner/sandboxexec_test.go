package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runner-cli/runner/runner/confine"
	"github.com/runner-cli/runner/runner/sandbox"
)

// TestSandboxExec runs runner sandbox-exec in a real bwrap sandbox, as a
// child's sandbox starts: with the binds as checked it runs the command;
// when what bwrap bound is another place than the one checked (a part of
// the path swapped for a link between the check and the bind, simulated
// by checking one folder and binding another there), or when a writable
// place is bound that was not checked, the command never runs.
func TestSandboxExec(t *testing.T) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		t.Skip("bubblewrap not installed")
	}
	if _, err := sandbox.Check(t.Context()); err != nil {
		t.Skip(err)
	}
	bin := selfAsRunner(t)
	base := t.TempDir()
	checked, other, extra := filepath.Join(base, "checked"), filepath.Join(base, "other"), filepath.Join(base, "extra")
	for _, d := range []string{checked, other, extra} {
		os.MkdirAll(d, 0o755)
	}
	exe, _ := os.Executable()
	run := func(spec sandbox.Spec, expectFrom sandbox.Spec) (string, error) {
		spec.Root = os.Geteuid() == 0
		spec.Readable = sandbox.Readable([]string{bin, exe, filepath.Dir(exe)})
		exps, err := sandbox.Expect(expectFrom)
		if err != nil {
			t.Fatal(err)
		}
		cmd := []string{filepath.Join(bin, "runner"), confine.SandboxExec}
		for _, e := range exps {
			cmd = append(cmd, "--expect", e.String())
		}
		cmd = append(cmd, "--", "sh", "-c", "touch "+filepath.Join(checked, "ran")+" && echo agent-ran")
		argv := sandbox.Argv(bwrap, spec, cmd)
		out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		return string(out), err
	}
	os.Remove(filepath.Join(checked, "ran"))
	out, err := run(sandbox.Spec{Writable: []string{checked}}, sandbox.Spec{Writable: []string{checked}})
	if err != nil || !strings.Contains(out, "agent-ran") {
		t.Fatalf("the binds as checked: %v\n%s", err, out)
	}
	// bwrap bound other where checked was checked.
	os.Remove(filepath.Join(checked, "ran"))
	out, err = run(sandbox.Spec{Binds: [][2]string{{other, checked}}}, sandbox.Spec{Writable: []string{checked}})
	if err == nil || strings.Contains(out, "agent-ran") || !strings.Contains(out, "not the place runner checked") {
		t.Errorf("another place bound: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(other, "ran")); err == nil {
		t.Errorf("the command ran in the other place")
	}
	// A writable place that was never checked.
	out, err = run(sandbox.Spec{Writable: []string{checked, extra}}, sandbox.Spec{Writable: []string{checked}})
	if err == nil || strings.Contains(out, "agent-ran") || !strings.Contains(out, "runner did not check it") {
		t.Errorf("an unchecked writable place: %v\n%s", err, out)
	}
}
