package gitsnap

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

// benchRepo generates a repository of n committed files (about 1 KiB each,
// 100 per directory), then modifies `modified` of them and adds `untracked`
// new files. File times are set in the past so no index entry is racy.
func benchRepo(b *testing.B, n, modified, untracked int) string {
	b.Helper()
	dir := b.TempDir()
	gitT(b, dir, "init", "-q")
	line := strings.Repeat("x", 60) + "\n"
	past := clock.Now().Add(-time.Hour)
	name := func(i int) string { return fmt.Sprintf("d%03d/f%05d.txt", i/100, i) }
	for i := range n {
		p := filepath.Join(dir, filepath.FromSlash(name(i)))
		if i%100 == 0 {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
		}
		content := fmt.Sprintf("file %d\n%s", i, strings.Repeat(line, 16))
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.Chtimes(p, past, past); err != nil {
			b.Fatal(err)
		}
	}
	gitT(b, dir, "add", "-A")
	gitT(b, dir, "commit", "-q", "-m", "generated")
	for i := range modified {
		p := filepath.Join(dir, filepath.FromSlash(name(i*(n/modified))))
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(f, "modified %d\n", i)
		f.Close()
	}
	for i := range untracked {
		write(b, dir, fmt.Sprintf("new/u%03d.txt", i), fmt.Sprintf("untracked %d\n", i))
	}
	return dir
}

// bareSequence is the plain plumbing snapshot the issue measures against:
// a fresh temporary index, read-tree HEAD, add -A, write-tree, commit-tree.
func bareSequence(ctx context.Context, dir string) error {
	tmp, err := os.MkdirTemp("", "gitsnap-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}
	if _, err := run(ctx, call{dir: dir, env: env, args: []string{"read-tree", "HEAD"}}); err != nil {
		return err
	}
	if _, err := run(ctx, call{dir: dir, env: env, args: []string{"add", "-A"}}); err != nil {
		return err
	}
	tree, err := run(ctx, call{dir: dir, env: env, args: []string{"write-tree"}})
	if err != nil {
		return err
	}
	_, err = run(ctx, call{dir: dir, args: []string{"commit-tree", trimOut(tree), "-p", "HEAD", "-m", "bench"}})
	return err
}

// BenchmarkSnapshot20k compares Take with the bare plumbing sequence and
// with `git stash create` on 20 000 committed files, 200 modified and 50
// untracked. The three are interleaved in every iteration (in rotating
// order) so load on a shared machine hits them alike; the ratios are
// reported as take/bare and take/stash. Run it with scripts/bench-snapshot.sh.
func BenchmarkSnapshot20k(b *testing.B) {
	dir := benchRepo(b, 20000, 200, 50)
	ctx := context.Background()
	steps := []struct {
		name string
		f    func(i int) error
	}{
		{"take", func(i int) error {
			_, err := Take(ctx, dir, Options{ID: fmt.Sprintf("b_%d", i)})
			return err
		}},
		{"bare", func(int) error { return bareSequence(ctx, dir) }},
		{"stash", func(int) error {
			_, err := run(ctx, call{dir: dir, args: []string{"stash", "create"}})
			return err
		}},
	}
	// Warm the page cache and git's object store once.
	for _, s := range steps {
		if err := s.f(-1); err != nil {
			b.Fatal(err)
		}
	}
	total := make([]time.Duration, len(steps))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range steps {
			j := (i + k) % len(steps)
			start := clock.Now()
			if err := steps[j].f(i); err != nil {
				b.Fatal(err)
			}
			total[j] += clock.Since(start)
		}
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(ms(total[0]), "take-ms")
	b.ReportMetric(ms(total[1]), "bare-ms")
	b.ReportMetric(ms(total[2]), "stash-ms")
	b.ReportMetric(float64(total[0])/float64(total[1]), "take/bare")
	b.ReportMetric(float64(total[0])/float64(total[2]), "take/stash")
}

// BenchmarkWorktree20k compares making a task's worktree (Take of the
// user's work tree with its 200 modified and 50 untracked files, then
// WorktreeAdd at that snapshot) with a bare `git worktree add` of HEAD,
// which carries none of the uncommitted work, on 20 000 committed files.
// The two alternate in every iteration (rotating order) so load on a shared
// machine hits them alike; each worktree is removed untimed. The ratio is
// reported as task/bare (target ≤ 1.3). Run it with scripts/bench-worktree.sh.
func BenchmarkWorktree20k(b *testing.B) {
	dir := benchRepo(b, 20000, 200, 50)
	ctx := context.Background()
	where := b.TempDir()
	steps := []struct {
		name string
		f    func(i int) (string, error)
	}{
		{"task", func(i int) (string, error) {
			id := fmt.Sprintf("t_bench%03d", i+1)
			snap, err := Take(ctx, dir, Options{ID: id})
			if err != nil {
				return "", err
			}
			p := filepath.Join(where, id)
			return p, WorktreeAdd(ctx, dir, p, BranchPrefix+id, snap.Commit)
		}},
		{"bare", func(i int) (string, error) {
			p := filepath.Join(where, fmt.Sprintf("bare%03d", i+1))
			_, err := run(ctx, call{dir: dir, args: []string{"worktree", "add", "--quiet", "--detach", p, "HEAD"}})
			return p, err
		}},
	}
	remove := func(p string) {
		if _, err := run(ctx, call{dir: dir, args: []string{"worktree", "remove", "--force", p}}); err != nil {
			b.Fatal(err)
		}
	}
	for _, s := range steps { // warm the page cache and the object store
		p, err := s.f(-1000)
		if err != nil {
			b.Fatal(err)
		}
		remove(p)
	}
	total := make([]time.Duration, len(steps))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range steps {
			j := (i + k) % len(steps)
			start := clock.Now()
			p, err := steps[j].f(i)
			if err != nil {
				b.Fatal(err)
			}
			total[j] += clock.Since(start)
			b.StopTimer()
			remove(p)
			b.StartTimer()
		}
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(ms(total[0]), "task-ms")
	b.ReportMetric(ms(total[1]), "bare-ms")
	b.ReportMetric(float64(total[0])/float64(total[1]), "task/bare")
}

// BenchmarkForecast20 measures MergeForecast of 20 task branches, each in
// its own worktree made as dispatch --worktree makes it (a snapshot, then
// the worktree) with an uncommitted change of its own, two pairs of them
// writing one file alike: the 20 merges into the target, then the 190
// pairs. Against two baselines in the same run, interleaved: one `git
// merge-tree --write-tree` of one branch into the target ("one"), and the
// naive forecast of the same 210 merges as 210 merge-tree processes of the
// committed branches ("naive"; it sees no uncommitted work). The repository
// has FORECAST_FILES committed files (default 2 000). Run it with
// scripts/bench-forecast.sh.
func BenchmarkForecast20(b *testing.B) {
	files := 2000
	if s := os.Getenv("FORECAST_FILES"); s != "" {
		fmt.Sscan(s, &files)
	}
	dir := benchRepo(b, files, 0, 0)
	ctx := context.Background()
	var branches []ForecastBranch
	var tips []string
	for i := range 20 {
		id := fmt.Sprintf("t_fc%02d", i)
		snap, err := Take(ctx, dir, Options{ID: id})
		if err != nil {
			b.Fatal(err)
		}
		wt := filepath.Join(b.TempDir(), id)
		if err := WorktreeAdd(ctx, dir, wt, BranchPrefix+id, snap.Commit); err != nil {
			b.Fatal(err)
		}
		// Its own file, committed; and one more, uncommitted: t_fc00 and
		// t_fc01 write one file, t_fc02 and t_fc03 another.
		write(b, wt, fmt.Sprintf("own/%02d.txt", i), "task\n")
		gitT(b, wt, "add", "-A")
		gitT(b, wt, "commit", "-q", "-m", id)
		shared := i
		if i < 4 {
			shared = i / 2
		}
		write(b, wt, fmt.Sprintf("shared/%02d.txt", shared), id+"\n")
		branches = append(branches, ForecastBranch{Branch: BranchPrefix + id, Worktree: wt, Base: snap.Ref})
		tips = append(tips, BranchPrefix+id)
	}
	// Worktrees as an agent leaves them: their index refreshed after the
	// files were written (else every entry is racy and each forecast
	// hashes every file of every worktree again).
	time.Sleep(1100 * time.Millisecond)
	for _, br := range branches {
		gitT(b, br.Worktree, "status", "--porcelain")
	}
	steps := []func() error{
		func() error {
			fc, err := MergeForecast(ctx, dir, "", branches)
			if err == nil && (len(fc.Branches[0].With) != 1 || len(fc.Branches[4].With) != 0) {
				err = fmt.Errorf("unexpected forecast %+v", fc.Branches[:5])
			}
			return err
		},
		func() error {
			_, err := run(ctx, call{dir: dir, args: []string{"merge-tree", "--write-tree", "--name-only", "--no-messages", "HEAD", tips[4]}})
			return err
		},
		func() error { return naiveForecast(ctx, dir, tips) },
	}
	total := interleaved(b, steps)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(ms(total[0]), "forecast-ms")
	b.ReportMetric(ms(total[1]), "one-ms")
	b.ReportMetric(ms(total[2]), "naive-ms")
	b.ReportMetric(float64(total[0])/float64(total[1]), "forecast/one")
	b.ReportMetric(float64(total[0])/float64(total[2]), "forecast/naive")
}

// naiveForecast is one merge-tree process per merge: each branch into
// HEAD, then each pair of branches.
func naiveForecast(ctx context.Context, dir string, tips []string) error {
	mt := func(a, b string) error {
		_, err := run(ctx, call{dir: dir, args: []string{"merge-tree", "--write-tree", "--name-only", "--no-messages", a, b}})
		var ge *GitError
		if errors.As(err, &ge) && ge.Err != nil && strings.Contains(ge.Err.Error(), "exit status 1") {
			return nil // a conflict
		}
		return err
	}
	for i, a := range tips {
		if err := mt("HEAD", a); err != nil {
			return err
		}
		for _, b := range tips[i+1:] {
			if err := mt(a, b); err != nil {
				return err
			}
		}
	}
	return nil
}

// BenchmarkChanged20k measures one look at what a task changed (Changed)
// in a worktree of a 20 000-file repository where its agent changed 20
// files, against `git status --porcelain` in the same worktree (what any
// prompt or editor runs), interleaved in every iteration. The ratio is
// reported as changed/status. Run it with scripts/bench-overlap.sh.
func BenchmarkChanged20k(b *testing.B) {
	dir := benchRepo(b, 20000, 0, 0)
	ctx := context.Background()
	snap, err := Take(ctx, dir, Options{ID: "t_benchchg"})
	if err != nil {
		b.Fatal(err)
	}
	wt := filepath.Join(b.TempDir(), "wt")
	if err := WorktreeAdd(ctx, dir, wt, BranchPrefix+"t_benchchg", snap.Commit); err != nil {
		b.Fatal(err)
	}
	for i := range 20 {
		write(b, wt, fmt.Sprintf("d%03d/f%05d.txt", i*10, i*1000), fmt.Sprintf("changed %d\n", i))
	}
	// The index kept from one look to the next, as a supervisor keeps it.
	keep := filepath.Join(b.TempDir(), "index")
	steps := []func() error{
		func() error {
			c, err := Changed(ctx, wt, snap.Ref, keep)
			if err == nil && len(c.Paths) != 20 {
				err = fmt.Errorf("%d paths changed, want 20", len(c.Paths))
			}
			return err
		},
		func() error {
			_, err := run(ctx, call{dir: wt, args: []string{"status", "--porcelain"}})
			return err
		},
	}
	total := interleaved(b, steps)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(ms(total[0]), "changed-ms")
	b.ReportMetric(ms(total[1]), "status-ms")
	b.ReportMetric(float64(total[0])/float64(total[1]), "changed/status")
}

// interleaved runs each step once untimed (to warm the page cache and the
// object store), then b.N rounds of all of them in rotating order, so that
// load on a shared machine hits them alike, and returns each one's total
// time.
func interleaved(b *testing.B, steps []func() error) []time.Duration {
	for _, f := range steps {
		if err := f(); err != nil {
			b.Fatal(err)
		}
	}
	total := make([]time.Duration, len(steps))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range steps {
			j := (i + k) % len(steps)
			start := clock.Now()
			if err := steps[j](); err != nil {
				b.Fatal(err)
			}
			total[j] += clock.Since(start)
		}
	}
	b.StopTimer()
	return total
}
