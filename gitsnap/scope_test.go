package gitsnap

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProjectSubdirectoryScope: a project that is a subdirectory of a
// larger repository (two agents in one repository, each in its own
// directory): diff, restore and commit act on the project's directory
// alone. Another directory's changes, made after the snapshot, are not
// shown, not undone, not committed, and what the user staged there stays
// staged; the project's snapshot is not "dirty" for changes outside it.
func TestProjectSubdirectoryScope(t *testing.T) {
	ctx := context.Background()
	top := newRepo(t, map[string]string{"api/main.go": "package api\n", "web/app.js": "app\n", "README": "r\n"})
	write(t, top, "web/dirty-before.js", "the user's, before the task\n") // untracked, outside the project
	api := filepath.Join(top, "api")
	snap, err := Take(ctx, api, Options{ID: "t_scope0001"})
	if err != nil {
		t.Fatal(err)
	}
	// The task's work, in api/; the user's (or another agent's), in web/.
	write(t, top, "api/main.go", "package api // changed\n")
	write(t, top, "api/new.go", "package api\n")
	write(t, top, "web/app.js", "app changed by someone else\n")
	write(t, top, "web/staged.js", "staged by the user\n")
	gitT(t, top, "add", "web/staged.js")

	d, err := Diff(ctx, api, snap.ID, DiffOptions{Patch: true})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range d.Files {
		paths = append(paths, f.Path)
	}
	if got := strings.Join(paths, " "); got != "api/main.go api/new.go" {
		t.Errorf("diff files %q, want the project's only", got)
	}
	if strings.Contains(d.Stat, "web/") || strings.Contains(d.Patch, "web/") {
		t.Errorf("diff shows another directory:\n%s\n%s", d.Stat, d.Patch)
	}

	res, err := Commit(ctx, api, CommitOptions{TaskID: "t_scope0001", Task: "change api"})
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	if res.Outcome != Committed {
		t.Fatalf("outcome %s", res.Outcome)
	}
	files := gitT(t, top, "show", "--name-only", "--format=", "HEAD")
	if strings.TrimSpace(files) != "api/main.go\napi/new.go" {
		t.Errorf("commit has %q, want the project's files only", files)
	}
	if st := gitT(t, top, "status", "--porcelain"); !strings.Contains(st, "A  web/staged.js") || !strings.Contains(st, " M web/app.js") || strings.Contains(st, "api/") {
		t.Errorf("status after the commit:\n%s\nwant web/ as the user left it (staged and unstaged), api/ clean", st)
	}

	// Restore to the snapshot: api/ goes back, web/ is left alone.
	if _, err := Restore(ctx, api, snap.ID); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(top, "api/main.go")); string(b) != "package api\n" {
		t.Errorf("api/main.go = %q after restore", b)
	}
	if _, err := os.Stat(filepath.Join(top, "api/new.go")); !os.IsNotExist(err) {
		t.Errorf("api/new.go still there after restore: %v", err)
	}
	for name, want := range map[string]string{"web/app.js": "app changed by someone else\n", "web/staged.js": "staged by the user\n", "web/dirty-before.js": "the user's, before the task\n"} {
		if b, _ := os.ReadFile(filepath.Join(top, name)); string(b) != want {
			t.Errorf("%s = %q after a restore of api/, want it untouched", name, b)
		}
	}
}
