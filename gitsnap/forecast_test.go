package gitsnap

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// frozen is everything of a work tree a forecast must leave byte for
// byte: git status (porcelain v2, untracked files too), HEAD, every ref,
// the stash list and the index file's bytes.
func frozen(t *testing.T, dir string) string {
	t.Helper()
	idx := gitT(t, dir, "rev-parse", "--path-format=absolute", "--git-path", "index")
	b, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return strings.Join([]string{
		gitT(t, dir, "--no-optional-locks", "status", "--porcelain=v2", "--branch", "--untracked-files=all"),
		gitT(t, dir, "rev-parse", "HEAD"),
		gitT(t, dir, "for-each-ref"),
		gitT(t, dir, "stash", "list"),
		hex.EncodeToString(sum[:]),
	}, "\n--\n")
}

// forecastCase sets up the user's repository dir (one commit of a.txt,
// b.txt, bin.dat; a stash; uncommitted work) and its task worktrees,
// and says what the forecast must find.
type forecastCase struct {
	name string
	// tasks change their worktrees (index i: task t_fc<i>); user changes
	// the user's repository after the tasks started (commits, mostly).
	tasks []func(t *testing.T, wt string)
	user  func(t *testing.T, dir string)
	// dirty: the user has uncommitted work in a.txt when the tasks start
	// (their snapshots carry it); it is reverted before user runs.
	dirty bool
	want  []BranchForecast // Branch filled in by the test
}

func commitAll(t *testing.T, dir, msg string) {
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", msg)
}

var forecastCases = []forecastCase{
	{
		name:  "clean",
		tasks: []func(*testing.T, string){func(t *testing.T, wt string) { write(t, wt, "a.txt", "a\nTASK\n") }},
		user:  func(t *testing.T, dir string) { write(t, dir, "b.txt", "b\nUSER\n"); commitAll(t, dir, "user") },
		want:  []BranchForecast{{}},
	},
	{
		name: "content conflict, committed in the worktree",
		tasks: []func(*testing.T, string){func(t *testing.T, wt string) {
			write(t, wt, "a.txt", "a\nTASK\n")
			commitAll(t, wt, "task")
		}},
		user: func(t *testing.T, dir string) { write(t, dir, "a.txt", "a\nUSER\n"); commitAll(t, dir, "user") },
		want: []BranchForecast{{Conflicts: []string{"a.txt"}}},
	},
	{
		name:  "rename/delete",
		tasks: []func(*testing.T, string){func(t *testing.T, wt string) { os.Remove(filepath.Join(wt, "b.txt")) }},
		user:  func(t *testing.T, dir string) { gitT(t, dir, "mv", "b.txt", "c.txt"); commitAll(t, dir, "rename") },
		want:  []BranchForecast{{Conflicts: []string{"c.txt"}}},
	},
	{
		name:  "binary file",
		tasks: []func(*testing.T, string){func(t *testing.T, wt string) { write(t, wt, "bin.dat", "\x00\x01TASK\x00") }},
		user: func(t *testing.T, dir string) {
			write(t, dir, "bin.dat", "\x00\x01USER\x00")
			commitAll(t, dir, "user")
		},
		want: []BranchForecast{{Conflicts: []string{"bin.dat"}}},
	},
	{
		name:  "a file added on both sides",
		tasks: []func(*testing.T, string){func(t *testing.T, wt string) { write(t, wt, "new.txt", "task's\n") }},
		user:  func(t *testing.T, dir string) { write(t, dir, "new.txt", "user's\n"); commitAll(t, dir, "user") },
		want:  []BranchForecast{{Conflicts: []string{"new.txt"}}},
	},
	{
		name: "two tasks add one file: a pair conflict; a third is clean; a fourth changed nothing",
		tasks: []func(*testing.T, string){
			func(t *testing.T, wt string) { write(t, wt, "shared.txt", "one\n") },
			func(t *testing.T, wt string) { write(t, wt, "shared.txt", "two\n") },
			func(t *testing.T, wt string) { write(t, wt, "own.txt", "three\n") },
			func(t *testing.T, wt string) {},
		},
		want: []BranchForecast{
			{With: []PairConflict{{Branch: "runner/t_fc1", Files: []string{"shared.txt"}}}},
			{With: []PairConflict{{Branch: "runner/t_fc0", Files: []string{"shared.txt"}}}},
			{},
			{UpToDate: true},
		},
	},
	{
		// The user's uncommitted a.txt rode into the task's worktree with
		// the snapshot; the user then committed a.txt differently. Only the
		// task's own change counts (as runner merge does), so no conflict;
		// from git's own merge base, a.txt would conflict.
		name:  "the user's uncommitted work in the snapshot is not the task's",
		dirty: true,
		tasks: []func(*testing.T, string){func(t *testing.T, wt string) {
			write(t, wt, "b.txt", "b\nTASK\n")
			commitAll(t, wt, "task")
		}},
		user: func(t *testing.T, dir string) { write(t, dir, "a.txt", "a\nUSER, later\n"); commitAll(t, dir, "user") },
		want: []BranchForecast{{}},
	},
}

// TestMergeForecast forecasts merges of task branches (uncommitted work in
// their worktrees included) into the user's branch, and checks that the
// user's and the tasks' work trees, indexes, HEADs, refs and stash are
// byte-identical afterwards.
func TestMergeForecast(t *testing.T) {
	for _, tc := range forecastCases {
		t.Run(tc.name, func(t *testing.T) {
			dir := newRepo(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "bin.dat": "\x00\x01\x02"})
			write(t, dir, "stashed.txt", "x\n")
			gitT(t, dir, "stash", "push", "-q", "-u")
			if tc.dirty {
				write(t, dir, "a.txt", "a\nthe user's, uncommitted\n")
			}
			var branches []ForecastBranch
			for i, change := range tc.tasks {
				id := "t_fc" + string(rune('0'+i))
				wt, snap := taskWorktree(t, dir, id)
				change(t, wt)
				branches = append(branches, ForecastBranch{Branch: BranchPrefix + id, Worktree: wt, Base: snap.Ref})
			}
			gitT(t, dir, "checkout", "-q", "--", "a.txt")
			if tc.user != nil {
				tc.user(t, dir)
			}
			write(t, dir, "a.txt", "a\nthe user's, uncommitted again\n")
			write(t, dir, "untracked.txt", "u\n")
			before := map[string]string{dir: frozen(t, dir)}
			for _, b := range branches {
				before[b.Worktree] = frozen(t, b.Worktree)
			}

			fc, err := MergeForecast(t.Context(), dir, "", branches)
			if err != nil {
				t.Fatal(err)
			}
			for d, want := range before {
				if got := frozen(t, d); got != want {
					t.Errorf("the forecast changed %s:\n%s\n->\n%s", d, want, got)
				}
			}
			if fc.Into != "main" || fc.Target != gitT(t, dir, "rev-parse", "HEAD") {
				t.Errorf("target %s %s", fc.Into, fc.Target)
			}
			for i := range tc.want {
				tc.want[i].Branch = branches[i].Branch
			}
			if !reflect.DeepEqual(fc.Branches, tc.want) {
				t.Errorf("forecast\n%+v\nwant\n%+v", fc.Branches, tc.want)
			}
			// Again: the same scratch objects, no new loose ones.
			count := gitT(t, dir, "count-objects")
			if _, err := MergeForecast(t.Context(), dir, "", branches); err != nil {
				t.Fatal(err)
			}
			if got := gitT(t, dir, "count-objects"); got != count {
				t.Errorf("a second forecast wrote objects: %s -> %s", count, got)
			}
		})
	}
}

// TestMergeForecastInto forecasts into a branch checked out nowhere, and
// refuses a branch or a target that does not exist.
func TestMergeForecastInto(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	gitT(t, dir, "branch", "release")
	wt, snap := taskWorktree(t, dir, "t_into1")
	write(t, wt, "a.txt", "a\nTASK\n")
	gitT(t, dir, "checkout", "-q", "release")
	write(t, dir, "a.txt", "a\nRELEASE\n")
	commitAll(t, dir, "release")
	gitT(t, dir, "checkout", "-q", "main")
	b := []ForecastBranch{{Branch: "runner/t_into1", Worktree: wt, Base: snap.Commit}}
	fc, err := MergeForecast(t.Context(), dir, "release", b)
	if err != nil || fc.Into != "release" || !reflect.DeepEqual(fc.Branches[0].Conflicts, []string{"a.txt"}) {
		t.Fatalf("into release: %+v %v", fc, err)
	}
	if fc, err := MergeForecast(t.Context(), dir, "", b); err != nil || !fc.Branches[0].Clean() {
		t.Fatalf("into main: %+v %v", fc, err)
	}
	if _, err := MergeForecast(t.Context(), dir, "nosuch", b); !errors.Is(err, ErrNoBranch) {
		t.Fatalf("--into nosuch: %v", err)
	}
	if _, err := MergeForecast(t.Context(), dir, "", []ForecastBranch{{Branch: "runner/t_gone"}}); !errors.Is(err, ErrNoBranch) || !strings.Contains(err.Error(), "runner/t_gone") {
		t.Fatalf("a branch that is gone: %v", err)
	}
	// The worktree deleted by hand: the branch alone is forecast.
	if err := os.RemoveAll(wt); err != nil {
		t.Fatal(err)
	}
	if fc, err := MergeForecast(t.Context(), dir, "", b); err != nil || !fc.Branches[0].UpToDate {
		t.Fatalf("worktree gone: %+v %v", fc, err)
	}
	if _, err := MergeForecast(t.Context(), newRepo(t, nil), "", nil); err == nil || !strings.Contains(err.Error(), "no commit yet") {
		t.Fatalf("unborn HEAD: %v", err)
	}
	if _, err := MergeForecast(t.Context(), t.TempDir(), "", nil); !errors.Is(err, ErrNotRepo) {
		t.Fatalf("not a repository: %v", err)
	}
}

func TestParseMergeTree(t *testing.T) {
	out := []byte("0\x00T1\x00a.txt\x00b c.txt\x00\x001\x00T2\x00\x00")
	got, err := parseMergeTree(out)
	want := []mergeOutcome{{tree: "T1", files: []string{"a.txt", "b c.txt"}}, {clean: true, tree: "T2"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := parseMergeTree([]byte("-1\x00\x00")); err == nil {
		t.Fatal("a merge that could not run parsed")
	}
}
