package gitsnap

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// agentTask snapshots a clean repo as task id, then changes files like an
// agent would.
func agentTask(t *testing.T, files map[string]string, id string) string {
	t.Helper()
	dir := newRepo(t, files)
	if _, err := Take(t.Context(), dir, Options{ID: id}); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "feature.go", "package feature\n")
	write(t, dir, "README.md", "updated by the agent\n")
	return dir
}

func TestCommitOnCurrentBranch(t *testing.T) {
	t.Parallel()
	dir := agentTask(t, baseFiles, "t_commit01")
	head := gitT(t, dir, "rev-parse", "HEAD")
	res, err := Commit(t.Context(), dir, CommitOptions{
		TaskID: "t_commit01", Task: "Add the feature module\nand more detail\n", Project: "api", Agent: "claude",
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != Committed || res.Branch != "main" || res.Parent != head || res.Counts != (Counts{Added: 1, Modified: 1}) {
		t.Fatalf("result %+v", res)
	}
	if got := gitT(t, dir, "rev-parse", "HEAD"); got != res.Commit {
		t.Errorf("HEAD is %s, want the new commit %s", got, res.Commit)
	}
	if got := gitT(t, dir, "symbolic-ref", "HEAD"); got != "refs/heads/main" {
		t.Errorf("HEAD now %s", got)
	}
	msg := gitRaw(t, dir, "log", "-1", "--format=%B")
	want := "Add the feature module\n\nTask run by runner (agent claude, project api).\n\nRunner-Task: t_commit01\n"
	if strings.TrimSpace(msg) != strings.TrimSpace(want) {
		t.Errorf("message\n%s\nwant\n%s", msg, want)
	}
	if tr := gitT(t, dir, "log", "-1", "--format=%(trailers:key=Runner-Task,valueonly)"); tr != "t_commit01" {
		t.Errorf("trailer Runner-Task = %q", tr)
	}
	// The index was updated with the commit: nothing staged, nothing left.
	if st := gitT(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("status after commit:\n%s", st)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "index.lock")); err == nil {
		t.Error("index.lock left behind")
	}
	// Again: nothing to commit is an outcome, not an error.
	again, err := Commit(t.Context(), dir, CommitOptions{TaskID: "t_commit01", Task: "again"})
	if err != nil || again.Outcome != NothingToCommit {
		t.Fatalf("second commit: %+v %v", again, err)
	}
	if !again.HeadMoved {
		t.Error("HeadMoved not reported after HEAD moved past the snapshot's base")
	}
}

func TestCommitOnTaskBranch(t *testing.T) {
	t.Parallel()
	dir := agentTask(t, baseFiles, "t_branch01")
	before := captureState(t, dir)
	res, err := Commit(t.Context(), dir, CommitOptions{TaskID: "t_branch01", Task: "On a branch", Branch: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != Committed || res.Branch != "runner/t_branch01" {
		t.Fatalf("result %+v", res)
	}
	after := captureState(t, dir)
	if before.Index != after.Index || before.Head != after.Head || before.HeadFile != after.HeadFile || before.Stash != after.Stash {
		t.Error("committing on a task branch moved HEAD, the index or the stash")
	}
	if d := diffFiles(before.WorkFiles, after.WorkFiles); d != "" {
		t.Errorf("work tree changed:\n%s", d)
	}
	if got := gitT(t, dir, "rev-parse", "runner/t_branch01"); got != res.Commit {
		t.Errorf("branch at %s, want %s", got, res.Commit)
	}
	if d := diffFiles(before.WorkFiles, treeFiles(t, dir, res.Commit+"^{tree}")); d != "" {
		t.Errorf("commit is not the work tree:\n%s", d)
	}
	if _, err := Commit(t.Context(), dir, CommitOptions{TaskID: "t_branch01", Branch: true}); !errors.Is(err, ErrExists) {
		t.Errorf("second commit on the same task branch: got %v, want ErrExists", err)
	}
}

func TestCommitRefusals(t *testing.T) {
	t.Run("dirty at snapshot", func(t *testing.T) {
		t.Parallel()
		dir := newRepo(t, baseFiles)
		write(t, dir, "users-own.txt", "wip\n")
		if _, err := Take(t.Context(), dir, Options{ID: "t_dirty001"}); err != nil {
			t.Fatal(err)
		}
		write(t, dir, "agent.txt", "agent\n")
		before := captureState(t, dir)
		_, err := Commit(t.Context(), dir, CommitOptions{TaskID: "t_dirty001", Task: "x"})
		if !errors.Is(err, ErrDirtyAtSnapshot) || !strings.Contains(err.Error(), "commit everything") || strings.Contains(err.Error(), "--") {
			t.Fatalf("got %v, want ErrDirtyAtSnapshot saying to commit everything (and naming no flag of runner's)", err)
		}
		assertSameState(t, before, captureState(t, dir))
		res, err := Commit(t.Context(), dir, CommitOptions{TaskID: "t_dirty001", Task: "x", All: true})
		if err != nil || res.Outcome != Committed || res.Counts.Added != 2 {
			t.Fatalf("with All: %+v %v", res, err)
		}
	})
	t.Run("no snapshot", func(t *testing.T) {
		t.Parallel()
		dir := newRepo(t, baseFiles)
		write(t, dir, "agent.txt", "agent\n")
		if _, err := Commit(t.Context(), dir, CommitOptions{TaskID: "t_nosnap01"}); !errors.Is(err, ErrDirtyAtSnapshot) {
			t.Fatalf("got %v, want ErrDirtyAtSnapshot", err)
		}
	})
	t.Run("nothing to commit", func(t *testing.T) {
		t.Parallel()
		dir := newRepo(t, baseFiles)
		if _, err := Take(t.Context(), dir, Options{ID: "t_nothing1"}); err != nil {
			t.Fatal(err)
		}
		before := captureState(t, dir)
		for _, branch := range []bool{false, true} {
			res, err := Commit(t.Context(), dir, CommitOptions{TaskID: "t_nothing1", Branch: branch})
			if err != nil || res.Outcome != NothingToCommit || res.Commit != "" {
				t.Fatalf("branch=%v: %+v %v", branch, res, err)
			}
		}
		assertSameState(t, before, captureState(t, dir))
	})
	t.Run("merge in progress", func(t *testing.T) {
		t.Parallel()
		dir := newRepo(t, map[string]string{"f": "base\n"})
		gitT(t, dir, "checkout", "-q", "-b", "other")
		write(t, dir, "f", "other\n")
		gitT(t, dir, "commit", "-q", "-am", "other")
		gitT(t, dir, "checkout", "-q", "main")
		write(t, dir, "f", "main\n")
		gitT(t, dir, "commit", "-q", "-am", "main")
		if _, err := Take(t.Context(), dir, Options{ID: "t_merge001"}); err != nil {
			t.Fatal(err)
		}
		gitErr(dir, nil, "merge", "other") // conflicts
		before := captureState(t, dir)
		_, err := Commit(t.Context(), dir, CommitOptions{TaskID: "t_merge001", All: true})
		if !errors.Is(err, ErrInProgress) || !strings.Contains(err.Error(), "merge") {
			t.Fatalf("got %v, want ErrInProgress naming the merge", err)
		}
		assertSameState(t, before, captureState(t, dir))
		// A snapshot during a conflicted merge still works and leaves it alone.
		if _, err := Take(t.Context(), dir, Options{}); err != nil {
			t.Fatal(err)
		}
		assertSameState(t, before, captureState(t, dir))
	})
	t.Run("rebase in progress", func(t *testing.T) {
		t.Parallel()
		dir := newRepo(t, map[string]string{"f": "base\n"})
		if _, err := Take(t.Context(), dir, Options{ID: "t_rebase01"}); err != nil {
			t.Fatal(err)
		}
		os.Mkdir(filepath.Join(dir, ".git", "rebase-merge"), 0o755)
		if _, err := Commit(t.Context(), dir, CommitOptions{TaskID: "t_rebase01"}); !errors.Is(err, ErrInProgress) || !strings.Contains(err.Error(), "rebase") {
			t.Fatalf("got %v, want ErrInProgress naming the rebase", err)
		}
	})
	t.Run("detached HEAD", func(t *testing.T) {
		t.Parallel()
		dir := newRepo(t, baseFiles)
		gitT(t, dir, "checkout", "-q", "--detach")
		if _, err := Take(t.Context(), dir, Options{ID: "t_detach01"}); err != nil {
			t.Fatal(err)
		}
		write(t, dir, "agent.txt", "agent\n")
		if _, err := Commit(t.Context(), dir, CommitOptions{TaskID: "t_detach01"}); !errors.Is(err, ErrDetachedHead) || !strings.Contains(err.Error(), "a branch of its own") || strings.Contains(err.Error(), "--") {
			t.Fatalf("got %v, want ErrDetachedHead suggesting a branch of its own (and naming no flag of runner's)", err)
		}
		res, err := Commit(t.Context(), dir, CommitOptions{TaskID: "t_detach01", Branch: true})
		if err != nil || res.Outcome != Committed {
			t.Fatalf("detached with Branch: %+v %v", res, err)
		}
	})
	t.Run("unborn branch", func(t *testing.T) {
		t.Parallel()
		dir := newRepo(t, nil)
		if _, err := Take(t.Context(), dir, Options{ID: "t_unborn01"}); err != nil {
			t.Fatal(err)
		}
		write(t, dir, "first.txt", "first\n")
		res, err := Commit(t.Context(), dir, CommitOptions{TaskID: "t_unborn01", Task: "First file"})
		if err != nil || res.Outcome != Committed || res.Parent != "" {
			t.Fatalf("%+v %v", res, err)
		}
		if got := gitT(t, dir, "log", "--format=%s", "main"); got != "First file" {
			t.Errorf("main log %q", got)
		}
		if st := gitT(t, dir, "status", "--porcelain"); st != "" {
			t.Errorf("status after commit:\n%s", st)
		}
	})
	t.Run("bad task ID", func(t *testing.T) {
		t.Parallel()
		if _, err := Commit(t.Context(), t.TempDir(), CommitOptions{TaskID: "bad id"}); !errors.Is(err, ErrBadID) {
			t.Fatalf("got %v, want ErrBadID", err)
		}
	})
}

func TestCommitWithoutIdentity(t *testing.T) {
	dir := agentTask(t, baseFiles, "t_noident1")
	for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"} {
		t.Setenv(k, "")
	}
	gitT(t, dir, "config", "user.useConfigOnly", "true")
	if _, err := Take(t.Context(), dir, Options{ID: "s_noident1"}); err != nil {
		t.Fatalf("snapshot without an identity: %v", err)
	}
	res, err := Commit(t.Context(), dir, CommitOptions{TaskID: "t_noident1", Task: "x"})
	if err != nil || !res.FallbackIdentity {
		t.Fatalf("%+v %v", res, err)
	}
	if who := gitT(t, dir, "log", "-1", "--format=%an <%ae>"); who != "runner <runner@localhost>" {
		t.Errorf("author %q", who)
	}
}

// TestLockRetry releases a lock held by "someone else" while a command
// waits for it: the command then succeeds.
func TestLockRetry(t *testing.T) {
	defer func(old func()) { beforeLockRetry = old }(beforeLockRetry)
	t.Run("index.lock", func(t *testing.T) {
		dir := agentTask(t, baseFiles, "t_retry001")
		lock := filepath.Join(dir, ".git", "index.lock")
		write(t, dir, ".git/index.lock", "held")
		retries := 0
		beforeLockRetry = func() {
			retries++
			os.Remove(lock)
		}
		res, err := Commit(t.Context(), dir, CommitOptions{TaskID: "t_retry001"})
		if err != nil || res.Outcome != Committed || retries != 1 {
			t.Fatalf("%+v %v after %d retries", res, err, retries)
		}
	})
	t.Run("ref lock", func(t *testing.T) {
		dir := agentTask(t, baseFiles, "t_retry002")
		lock := filepath.Join(dir, ".git", "refs", "heads", "runner", "t_retry002.lock")
		write(t, dir, ".git/refs/heads/runner/t_retry002.lock", "held")
		retries := 0
		beforeLockRetry = func() {
			retries++
			os.Remove(lock)
		}
		res, err := Commit(t.Context(), dir, CommitOptions{TaskID: "t_retry002", Branch: true})
		if err != nil || res.Outcome != Committed || retries != 1 {
			t.Fatalf("%+v %v after %d retries", res, err, retries)
		}
	})
	t.Run("gives up", func(t *testing.T) {
		dir := agentTask(t, baseFiles, "t_retry003")
		write(t, dir, ".git/refs/heads/runner/t_retry003.lock", "held")
		retries := 0
		beforeLockRetry = func() { retries++ }
		_, err := Commit(t.Context(), dir, CommitOptions{TaskID: "t_retry003", Branch: true})
		if !errors.Is(err, ErrLocked) || retries < 1 || !strings.Contains(err.Error(), "t_retry003.lock") {
			t.Fatalf("got %v after %d retries, want ErrLocked naming the lock", err, retries)
		}
	})
}

func TestCommitMessage(t *testing.T) {
	long := strings.Repeat("word ", 30)
	for _, tc := range []struct {
		opts CommitOptions
		want string
	}{
		{CommitOptions{TaskID: "t_1", Task: "Fix it"}, "Fix it\n\nRunner-Task: t_1\n"},
		{CommitOptions{TaskID: "t_1", Task: "\n\n  Fix it  \nmore", Agent: "codex"}, "Fix it\n\nTask run by runner (agent codex).\n\nRunner-Task: t_1\n"},
		{CommitOptions{TaskID: "t_1", Project: "web"}, "runner task t_1\n\nTask run by runner (project web).\n\nRunner-Task: t_1\n"},
		{CommitOptions{TaskID: "t_1", Task: long}, strings.TrimSpace(long[:71]) + "…\n\nRunner-Task: t_1\n"},
	} {
		if got := commitMessage(tc.opts); got != tc.want {
			t.Errorf("commitMessage(%+v) =\n%q\nwant\n%q", tc.opts, got, tc.want)
		}
	}
}
