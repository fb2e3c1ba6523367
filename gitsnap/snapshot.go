package gitsnap

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/textutil"
)

// RefPrefix is where snapshots live; refs keep them safe from git gc.
const RefPrefix = "refs/runner/snapshots/"

// Snapshot is one recorded state of a work tree. Everything but Duration is
// read back from the snapshot commit itself, so List and Get need no other
// state.
type Snapshot struct {
	ID     string    `json:"id"`
	Ref    string    `json:"ref"`
	Commit string    `json:"commit"`
	Tree   string    `json:"tree"`
	Base   string    `json:"base,omitempty"`   // HEAD commit at snapshot time; "" when HEAD was unborn
	Branch string    `json:"branch,omitempty"` // branch checked out; "" when detached
	Label  string    `json:"label,omitempty"`
	Time   time.Time `json:"time"`
	// Dirty is true when the snapshot differs from Base: staged, unstaged
	// or untracked (non-ignored) changes existed.
	Dirty  bool   `json:"dirty"`
	Counts Counts `json:"counts"`
	// Dir is the top of the work tree.
	Dir string `json:"dir"`
	// Duration is how long Take took; zero for snapshots read back.
	Duration time.Duration `json:"duration_ns,omitempty"`
}

// Counts are the paths that differ between a snapshot and its base.
type Counts struct {
	Added    int `json:"added"`
	Modified int `json:"modified"`
	Deleted  int `json:"deleted"`
}

// Total is the number of changed paths.
func (c Counts) Total() int { return c.Added + c.Modified + c.Deleted }

// Options tune Take.
type Options struct {
	// ID names the snapshot (ref refs/runner/snapshots/<ID>); dispatch
	// passes the task ID. Empty means a new "s_" + 8 random [a-z0-9].
	ID string
	// Label is a free one-line note; newlines are replaced by spaces.
	Label string
	// Keep is the index file a later Changed on the same work tree keeps
	// (its keep): when set, the snapshot's index is copied there, so that
	// Changed starts from it and, while nothing in the work tree changed,
	// writes no tree (one git call). Best effort; only on this machine.
	Keep string
}

// ValidID reports whether id can name a snapshot.
// ([A-Za-z0-9][A-Za-z0-9_-]{0,63}).
func ValidID(id string) bool { return textutil.IsName(id, 64, true, "_-") }

// NewID returns a fresh snapshot ID: "s_" and 8 random [a-z0-9].
func NewID() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go ≥ 1.24)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return "s_" + string(b)
}

// Take records the current state of the work tree containing dir — tracked
// changes and untracked, non-ignored files — as the commit
// refs/runner/snapshots/<ID>, whose parent is HEAD (none when HEAD is unborn).
// The user's index, work tree, HEAD, branch and stash are not touched: the
// state is built on a temporary copy of the index. Submodules are recorded as
// gitlinks, not recursed. It is Capture, then Commit.
func Take(ctx context.Context, dir string, opts Options) (*Snapshot, error) {
	c, err := Capture(ctx, dir, opts)
	if err != nil {
		return nil, err
	}
	return c.Commit(ctx)
}

// Captured is a snapshot half taken (Capture): the state of the work tree
// is fixed, its files' contents stored in the repository and listed in a
// private index; Commit writes that index's tree, the snapshot's commit
// and its ref. What the work tree does after Capture returned is not in
// the snapshot: a task may start working as soon as its snapshot is
// captured, the commit being written beside it.
type Captured struct {
	r     *repo
	id    string
	label string
	keep  string
	start time.Time
	took  time.Duration
	tmp   string // the private index's directory, removed by Commit
	mu    sync.Mutex
	done  bool
	snap  *Snapshot
	err   error
}

// Capture is the first half of Take: it fixes the current state of the
// work tree containing dir in a private index (git rev-parse and add) and
// returns it for Commit, which must follow (it removes the private index).
func Capture(ctx context.Context, dir string, opts Options) (*Captured, error) {
	start := clock.Now()
	id := opts.ID
	if id == "" {
		id = NewID()
	}
	if !ValidID(id) {
		return nil, fmt.Errorf("snapshot ID %q: %w (use letters, digits, '_' and '-', at most 64)", id, ErrBadID)
	}
	r, err := open(ctx, dir)
	if err != nil {
		return nil, err
	}
	return r.capture(ctx, id, oneLine(opts.Label), start, opts.Keep)
}

// capture is Capture on r.
func (r *repo) capture(ctx context.Context, id, label string, start time.Time, keep string) (*Captured, error) {
	tmp, copied, err := r.fs.tempIndex(ctx, r.index)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: temporary index: %w", r.top, err)
	}
	if err := r.addOn(ctx, tmp+"/index", copied); err != nil {
		r.fs.removeAll(ctx, tmp)
		return nil, err
	}
	return &Captured{r: r, id: id, label: label, keep: keep, start: start, took: clock.Since(start), tmp: tmp}, nil
}

// Ref is the ref the snapshot gets (refs/runner/snapshots/<ID>) once
// committed.
func (c *Captured) Ref() string { return RefPrefix + c.id }

// Took is how long the capture took.
func (c *Captured) Took() time.Duration { return c.took }

// Commit is the second half of Take: it writes the captured state's tree
// and the snapshot's commit and ref, and removes the private index. It is
// done once: a later call returns the first one's result.
func (c *Captured) Commit(ctx context.Context) (*Snapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.done {
		c.done = true
		c.snap, c.err = c.commit(ctx)
	}
	return c.snap, c.err
}

func (c *Captured) commit(ctx context.Context) (*Snapshot, error) {
	r := c.r
	defer r.fs.removeAll(ctx, c.tmp)
	tree, err := r.writeTreeKept(ctx, c.tmp+"/index", c.keep)
	if err != nil {
		return nil, err
	}
	return r.commitSnapshot(ctx, c.id, c.label, c.start, tree)
}

func (r *repo) take(ctx context.Context, id, label string, start time.Time, keep string) (*Snapshot, error) {
	c, err := r.capture(ctx, id, label, start, keep)
	if err != nil {
		return nil, err
	}
	return c.Commit(ctx)
}

// commitSnapshot writes the snapshot of tree: its commit, and its ref.
func (r *repo) commitSnapshot(ctx context.Context, id, label string, start time.Time, tree string) (*Snapshot, error) {
	ref := RefPrefix + id
	s := &Snapshot{ID: id, Ref: ref, Tree: tree, Base: r.head, Branch: r.branch(), Label: label,
		Time: clock.Now().UTC(), Dir: r.top}
	if tree != r.headTree {
		changes, err := r.treeChanges(ctx, r.headTree, tree)
		if err != nil {
			return nil, err
		}
		s.Counts = countChanges(changes)
		s.Dirty = len(changes) > 0 // an unborn HEAD and an empty tree are clean
	}
	commit, err := r.commitTree(ctx, tree, r.head, formatMessage(s))
	if err != nil {
		return nil, err
	}
	s.Commit = commit
	// The empty old value makes update-ref refuse to overwrite a snapshot
	// created meanwhile under the same ID.
	if _, err := run(ctx, call{via: r.via, dir: r.top, locks: true, args: []string{"update-ref", "-m", "runner snapshot", ref, commit, ""}}); err != nil {
		var ge *GitError
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "already exists") {
			return nil, fmt.Errorf("snapshot %s in %s: %w (pick another ID)", id, r.top, ErrExists)
		}
		return nil, err
	}
	knownRepos.remember(r, ref, tree)
	s.Duration = clock.Since(start)
	return s, nil
}

// commitTree writes a commit of tree with the given parent ("" for none)
// without hooks or signing. Without a usable identity, it retries with
// runner's own (reported by the second result).
func (r *repo) commitTree(ctx context.Context, tree, parent, msg string) (string, error) {
	c, _, err := r.commitTreeIdent(ctx, tree, parent, msg)
	return c, err
}

func (r *repo) commitTreeIdent(ctx context.Context, tree, parent, msg string) (string, bool, error) {
	args := []string{"commit-tree", "--no-gpg-sign", tree}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	args = append(args, "-F", "-")
	out, err := run(ctx, call{via: r.via, dir: r.top, stdin: strings.NewReader(msg), args: args})
	if err != nil && isIdentityError(err) {
		out, err = run(ctx, call{via: r.via, dir: r.top, env: fallbackIdentity, stdin: strings.NewReader(msg), args: args})
		if err == nil {
			return trimOut(out), true, nil
		}
	}
	if err != nil {
		return "", false, err
	}
	return trimOut(out), false, nil
}

// Change is one path that differs between two trees. Status is git's
// letter: A added, M modified, D deleted, T type changed.
type Change struct {
	Status string `json:"status"`
	Path   string `json:"path"`
	// OldMode and NewMode are git's octal modes ("000000" when absent).
	OldMode string `json:"-"`
	NewMode string `json:"-"`
}

// treeChanges lists the paths that differ between two trees ("" for the
// empty tree: every path of to is added), without rename detection.
func (r *repo) treeChanges(ctx context.Context, from, to string, pathspec ...string) ([]Change, error) {
	if from == "" {
		out, err := r.git(ctx, append([]string{"ls-tree", "-r", "-z", "--full-tree", to}, pathspec...)...)
		if err != nil {
			return nil, err
		}
		var changes []Change
		for _, rec := range strings.Split(string(out), "\x00") {
			meta, path, ok := strings.Cut(rec, "\t")
			if !ok {
				continue
			}
			mode, _, _ := strings.Cut(meta, " ")
			changes = append(changes, Change{Status: "A", Path: path, OldMode: "000000", NewMode: mode})
		}
		return changes, nil
	}
	out, err := r.git(ctx, append([]string{"diff-tree", "-r", "-z", "--no-renames", "--raw", from, to}, pathspec...)...)
	if err != nil {
		return nil, err
	}
	return parseRaw(out)
}

// parseRaw parses `git diff-tree -r -z --raw` output:
// ":oldmode newmode oldsha newsha status\0path\0" repeated.
func parseRaw(out []byte) ([]Change, error) {
	var changes []Change
	fields := bytes.Split(out, []byte{0})
	for i := 0; i < len(fields); i++ {
		f := string(fields[i])
		if f == "" {
			continue
		}
		meta := strings.Fields(strings.TrimPrefix(f, ":"))
		if f[0] != ':' || len(meta) != 5 || i+1 >= len(fields) {
			return nil, fmt.Errorf("parse git diff-tree output: bad record %q", f)
		}
		i++
		changes = append(changes, Change{Status: meta[4][:1], Path: string(fields[i]), OldMode: meta[0], NewMode: meta[1]})
	}
	return changes, nil
}

func countChanges(changes []Change) Counts {
	var c Counts
	for _, ch := range changes {
		switch ch.Status {
		case "A":
			c.Added++
		case "D":
			c.Deleted++
		default:
			c.Modified++
		}
	}
	return c
}

// List returns the snapshots of the repository containing dir, newest first.
func List(ctx context.Context, dir string) ([]Snapshot, error) {
	r, err := open(ctx, dir)
	if err != nil {
		return nil, err
	}
	return r.list(ctx)
}

func (r *repo) list(ctx context.Context) ([]Snapshot, error) {
	out, err := r.git(ctx, "for-each-ref", "--format=%(refname)%00%(objectname)%00%(tree)%00%(committerdate:unix)%00%(contents)%00", RefPrefix)
	if err != nil {
		return nil, err
	}
	var snaps []Snapshot
	for _, rec := range strings.Split(string(out), "\x00\n") {
		f := strings.Split(rec, "\x00")
		if len(f) < 5 {
			continue
		}
		s := Snapshot{ID: strings.TrimPrefix(f[0], RefPrefix), Ref: f[0], Commit: f[1], Tree: f[2], Dir: r.top}
		if sec, err := strconv.ParseInt(f[3], 10, 64); err == nil {
			s.Time = clock.Outside(time.Unix(sec, 0)).UTC()
		}
		parseMessage(f[4], &s) // a foreign commit under our prefix keeps what git knows
		snaps = append(snaps, s)
	}
	sort.SliceStable(snaps, func(i, j int) bool {
		if !snaps[i].Time.Equal(snaps[j].Time) {
			return snaps[i].Time.After(snaps[j].Time)
		}
		return snaps[i].ID < snaps[j].ID
	})
	return snaps, nil
}

// Get returns the snapshot whose ID is id or starts with it (a unique
// prefix), in the repository containing dir.
func Get(ctx context.Context, dir, id string) (*Snapshot, error) {
	r, err := open(ctx, dir)
	if err != nil {
		return nil, err
	}
	return r.get(ctx, id)
}

func (r *repo) get(ctx context.Context, id string) (*Snapshot, error) {
	if id == "" {
		return nil, fmt.Errorf("empty snapshot ID: %w", ErrNotFound)
	}
	snaps, err := r.list(ctx)
	if err != nil {
		return nil, err
	}
	var matches []Snapshot
	for _, s := range snaps {
		if s.ID == id {
			return &s, nil
		}
		if strings.HasPrefix(s.ID, id) {
			matches = append(matches, s)
		}
	}
	switch len(matches) {
	case 0:
		return nil, fmt.Errorf("snapshot %q in %s: %w (see 'runner snapshot list')", id, r.top, ErrNotFound)
	case 1:
		return &matches[0], nil
	}
	ids := make([]string, len(matches))
	for i, m := range matches {
		ids[i] = m.ID
	}
	return nil, fmt.Errorf("snapshot prefix %q in %s matches %s: %w (give more characters)", id, r.top, strings.Join(ids, ", "), ErrAmbiguous)
}

// Prune deletes the snapshots older than olderThan in the repository
// containing dir and returns them. Their objects go with the next git gc.
func Prune(ctx context.Context, dir string, olderThan time.Duration) ([]Snapshot, error) {
	if olderThan < 0 {
		return nil, errors.New("prune snapshots: negative age")
	}
	r, err := open(ctx, dir)
	if err != nil {
		return nil, err
	}
	snaps, err := r.list(ctx)
	if err != nil {
		return nil, err
	}
	cutoff := clock.Now().Add(-olderThan)
	var old []Snapshot
	var in strings.Builder
	for _, s := range snaps {
		if s.Time.Before(cutoff) {
			old = append(old, s)
			fmt.Fprintf(&in, "delete %s %s\n", s.Ref, s.Commit)
		}
	}
	if len(old) == 0 {
		return nil, nil
	}
	if _, err := run(ctx, call{via: r.via, dir: r.top, locks: true, stdin: strings.NewReader(in.String()), args: []string{"update-ref", "--stdin"}}); err != nil {
		return nil, err
	}
	return old, nil
}

// Alias records snapshot from (an id in the repository containing dir) a
// second time under id: the same tree, base and counts, a snapshot of its
// own (its commit names id), taken in no time and touching no file. The
// candidates of a group each start from the group's one snapshot so.
func Alias(ctx context.Context, dir, from, id string) (*Snapshot, error) {
	start := clock.Now()
	if !ValidID(id) {
		return nil, fmt.Errorf("snapshot ID %q: %w (use letters, digits, '_' and '-', at most 64)", id, ErrBadID)
	}
	r, err := open(ctx, dir)
	if err != nil {
		return nil, err
	}
	src, err := r.get(ctx, from)
	if err != nil {
		return nil, err
	}
	s := *src
	s.ID, s.Ref, s.Label, s.Time, s.Dir = id, RefPrefix+id, src.Label, clock.Now().UTC(), r.top
	commit, err := r.commitTree(ctx, s.Tree, s.Base, formatMessage(&s))
	if err != nil {
		return nil, err
	}
	s.Commit = commit
	if _, err := run(ctx, call{via: r.via, dir: r.top, locks: true, args: []string{"update-ref", "-m", "runner snapshot (alias of " + src.ID + ")", s.Ref, commit, ""}}); err != nil {
		var ge *GitError
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "already exists") {
			return nil, fmt.Errorf("snapshot %s in %s: %w (pick another ID)", id, r.top, ErrExists)
		}
		return nil, err
	}
	s.Duration = clock.Since(start)
	return &s, nil
}
