package tmuxctl

import (
	"slices"
	"testing"
)

func TestChildEnv(t *testing.T) {
	environ := []string{"PATH=/bin", "RUNNER_TASK_ID=t_parent00", "RUNNER_LEVEL=2", "HOME=/h", "FOO=old", "RUNNER_EVENTS_FILE=/e", "NOEQUALS"}
	got := ChildEnv(environ, "FOO=new", "RUNNER_TASK_ID=t_child000")
	want := []string{"PATH=/bin", "HOME=/h", "NOEQUALS", "FOO=new", "RUNNER_TASK_ID=t_child000"}
	if !slices.Equal(got, want) {
		t.Errorf("ChildEnv = %q, want %q", got, want)
	}
	if got := ChildEnv(nil); len(got) != 0 {
		t.Errorf("ChildEnv(nil) = %q", got)
	}
}
