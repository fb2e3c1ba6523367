// Carrying commits between two repositories, each on this machine or on
// another one (On): the objects go as one pack (pack-objects there,
// index-pack here, over the transport's stdin and stdout), then refs are
// pointed at them.

package gitsnap

import (
	"bytes"
	"context"
	"fmt"
	"strings"
)

// CarryRef is a ref to set in the receiving repository, at a commit of
// the sending one.
type CarryRef struct {
	Ref    string // a full ref name: refs/runner/snapshots/ID, refs/heads/B
	Commit string // the commit (full id)
}

// CarryResult says what Carry moved.
type CarryResult struct {
	// Bytes is the size of the pack sent (0: the receiver had every
	// commit already).
	Bytes int `json:"bytes"`
	// Set are the refs made; refs already at their commit are not.
	Set []string `json:"set"`
}

// Carry copies refs' commits, with what they reach, from the repository
// at src (on the machine of srcCtx: see On) into the one at dst (on the
// machine of dstCtx), and makes each ref there. The commits in have that
// the receiver holds already are left out of the pack (give the commit a
// snapshot was taken on: only what is new since goes). A ref that exists
// there at another commit is an error and nothing of it changes (a ref at
// the same commit is kept: the two repositories may be one).
func Carry(srcCtx context.Context, src string, dstCtx context.Context, dst string, refs []CarryRef, have []string) (*CarryResult, error) {
	from, err := open(srcCtx, src)
	if err != nil {
		return nil, fmt.Errorf("carry from %s: %w", src, err)
	}
	to, err := open(dstCtx, dst)
	if err != nil {
		return nil, fmt.Errorf("carry to %s: %w", dst, err)
	}
	res := &CarryResult{Set: []string{}}
	var want []string
	for _, r := range refs {
		if !to.hasCommit(dstCtx, r.Commit) {
			want = append(want, r.Commit)
		}
	}
	if len(want) > 0 {
		var revs strings.Builder
		for _, c := range want {
			revs.WriteString(c + "\n")
		}
		for _, h := range have {
			if h != "" && to.hasCommit(dstCtx, h) {
				revs.WriteString("^" + h + "\n")
			}
		}
		pack, err := run(srcCtx, call{via: from.via, dir: from.top, stdin: strings.NewReader(revs.String()),
			args: []string{"pack-objects", "--stdout", "--revs", "--quiet"}})
		if err != nil {
			return nil, fmt.Errorf("carry from %s: pack the commits: %w", from.top, err)
		}
		res.Bytes = len(pack)
		if _, err := run(dstCtx, call{via: to.via, dir: to.top, stdin: bytes.NewReader(pack),
			args: []string{"index-pack", "--stdin", "--fix-thin"}}); err != nil {
			return nil, fmt.Errorf("carry to %s: store the pack: %w", to.top, err)
		}
	}
	for _, r := range refs {
		out, err := to.git(dstCtx, "rev-parse", "-q", "--verify", r.Ref+"^{commit}")
		switch cur := trimOut(out); {
		case err == nil && cur == r.Commit:
			continue
		case err == nil:
			return res, fmt.Errorf("carry to %s: %s is at %s there, not %s: %w (remove it there, or pick another)", to.top, r.Ref, cur, r.Commit, ErrExists)
		}
		if _, err := run(dstCtx, call{via: to.via, dir: to.top, locks: true,
			args: []string{"update-ref", "-m", "runner carry", r.Ref, r.Commit, ""}}); err != nil {
			return res, fmt.Errorf("carry to %s: %w", to.top, err)
		}
		res.Set = append(res.Set, r.Ref)
	}
	return res, nil
}

// hasCommit reports whether the repository holds commit c.
func (r *repo) hasCommit(ctx context.Context, c string) bool {
	_, err := r.git(ctx, "cat-file", "-e", c+"^{commit}")
	return err == nil
}

// RefCommit is the commit ref names in the repository at dir (an error
// when it names none).
func RefCommit(ctx context.Context, dir, ref string) (string, error) {
	r, err := open(ctx, dir)
	if err != nil {
		return "", err
	}
	out, err := r.git(ctx, "rev-parse", "-q", "--verify", ref+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("%s names no commit in %s: %w", ref, r.top, err)
	}
	return trimOut(out), nil
}

// DropRefs deletes refs (full names) in the repository containing dir (on
// the machine of ctx: see On), listed in one for-each-ref and deleted in
// one update-ref, and returns those that were there; a ref that is not there is no error. It is how gc removes
// the refs a group's carries left (its snapshot on a host, a pick's tip
// here).
func DropRefs(ctx context.Context, dir string, refs []string) ([]string, error) {
	r, err := open(ctx, dir)
	if err != nil {
		return nil, err
	}
	if len(refs) == 0 {
		return nil, nil
	}
	out, err := r.git(ctx, append([]string{"for-each-ref", "--format=%(refname)", "--"}, refs...)...)
	if err != nil {
		return nil, fmt.Errorf("list %s in %s: %w", strings.Join(refs, ", "), r.top, err)
	}
	want := map[string]bool{}
	for _, ref := range refs {
		want[ref] = true
	}
	var there []string
	var in strings.Builder
	for _, ref := range strings.Fields(string(out)) {
		if want[ref] { // a pattern matches the refs below it too
			there = append(there, ref)
			fmt.Fprintf(&in, "delete %s\n", ref)
		}
	}
	if len(there) == 0 {
		return nil, nil
	}
	if _, err := run(ctx, call{via: r.via, dir: r.top, locks: true, stdin: strings.NewReader(in.String()), args: []string{"update-ref", "--stdin"}}); err != nil {
		return nil, fmt.Errorf("delete %s in %s: %w", strings.Join(there, ", "), r.top, err)
	}
	return there, nil
}

// SameRepository reports whether the repository containing dir on the
// machine of ctx and the one containing other on the machine of otherCtx
// are one (a host on this machine, its path the same): a ref made in the
// first for a moment (refs/runner/probe/…, removed after) is looked for
// in the second. Their HEADs differing answers false at once.
func SameRepository(ctx context.Context, dir string, otherCtx context.Context, other string) (bool, error) {
	a, err := open(ctx, dir)
	if err != nil {
		return false, err
	}
	b, err := open(otherCtx, other)
	if err != nil {
		return false, err
	}
	ha, _ := a.git(ctx, "rev-parse", "-q", "--verify", "HEAD^{commit}")
	hb, _ := b.git(otherCtx, "rev-parse", "-q", "--verify", "HEAD^{commit}")
	if trimOut(ha) != trimOut(hb) || trimOut(ha) == "" {
		return false, nil
	}
	probe := "refs/runner/probe/" + NewID()
	if _, err := run(ctx, call{via: a.via, dir: a.top, locks: true, args: []string{"update-ref", "-m", "runner probe", probe, trimOut(ha), ""}}); err != nil {
		return false, fmt.Errorf("probe %s: %w", a.top, err)
	}
	defer func() {
		_, _ = run(context.WithoutCancel(ctx), call{via: a.via, dir: a.top, locks: true, args: []string{"update-ref", "-d", probe}})
	}()
	_, err = b.git(otherCtx, "rev-parse", "-q", "--verify", probe)
	return err == nil, nil
}

// Head is the branch checked out in the repository containing dir (""
// when HEAD is detached) and HEAD's commit ("" when it has none yet).
func Head(ctx context.Context, dir string) (branch, commit string, err error) {
	r, err := open(ctx, dir)
	if err != nil {
		return "", "", err
	}
	return r.branch(), r.head, nil
}
