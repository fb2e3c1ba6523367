package importcheck

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOneSubprocessCatches: each way of starting a process or ending a
// process group outside the helper is found, and what is not one is not.
func TestOneSubprocessCatches(t *testing.T) {
	dir := t.TempDir()
	for _, sub := range []string{"helper", "lib"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	helper := `package helper

func Group() { exec.Command("sh"); syscall.Kill(-pid, syscall.SIGTERM) }
`
	// Each line marked "error" is one error; the others none.
	uses := `package lib

func f(ctx context.Context, pid int) {
	exec.Command("sh")                                       // error
	exec.CommandContext(ctx, "sh")                           // error
	os.StartProcess("/bin/sh", nil, nil)                     // error
	syscall.ForkExec("/bin/sh", nil, nil)                    // error
	_ = &syscall.SysProcAttr{Setpgid: true}                  // error
	attr.Setsid = true                                       // error
	syscall.Kill(-pid, syscall.SIGKILL)                      // error
	unix.Killpg(pid, unix.SIGTERM)                           // error
	syscall.Kill(pid, 0)
	syscall.Exec("/bin/sh", nil, nil)
	helper.Group()
	exec.LookPath("sh")
}
`
	for p, text := range map[string]string{"helper/a.go": helper, "lib/a.go": uses, "lib/a_test.go": uses} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	f := &fakeT{TB: t}
	OneSubprocess(f, dir, "helper")
	if f.errors != 8 {
		t.Errorf("%d errors, want 8 (the lines marked in lib/a.go)", f.errors)
	}
}

// TestOneFlockCatches: a flock taken outside the owner is found.
func TestOneFlockCatches(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "lib"), 0o700); err != nil {
		t.Fatal(err)
	}
	src := `package lib

func f(fd int) {
	syscall.Flock(fd, syscall.LOCK_EX)    // error
	unix.Flock(fd, unix.LOCK_UN)          // error
	flock.New("/tmp/x")                   // error
	filelock.Lock(ctx, "/tmp/x", false, 0)
}
`
	if err := os.WriteFile(filepath.Join(dir, "lib", "a.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	f := &fakeT{TB: t}
	OneFlock(f, dir, "owner")
	if f.errors != 3 {
		t.Errorf("%d errors, want 3", f.errors)
	}
}
