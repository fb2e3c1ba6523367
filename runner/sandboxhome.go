package runner

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/runner-cli/runner/runner/exit"
)

// Sandbox homes (config sandbox_home = "task", dispatch --sandbox-home
// task): a sandboxed agent's CLI directories (the profile's sandbox_paths:
// ~/.claude, ~/.codex, …) are copied for the task into the state
// directory (homes/ID/) and bound over the real ones inside its sandbox,
// so that what the agent writes there — a hook planted in
// ~/.claude/settings.json, a Codex notify — never reaches the CLI the user
// runs later. The copy goes with the task's record (pruned, or gc). A
// follow-up of the task works on its copy.

// homeCopyMax bounds what a task's copy of its CLI's directories may
// hold: a CLI directory of gigabytes (years of sessions) is refused with
// what to do, not copied per task.
const homeCopyMax = 512 << 20

// homeCopies copies each of paths (absolute; the CLI's directories and
// files) into root, at its place relative to home (or its whole path when
// it lies outside home), once: a copy that exists is the task's already
// (a follow-up). It returns agent path → copy.
func homeCopies(root, home string, paths []string) (map[string]string, error) {
	copies := map[string]string{}
	var total int64
	for _, p := range paths {
		rel, err := filepath.Rel(home, p)
		if err != nil || home == "" || strings.HasPrefix(rel, "..") {
			rel = filepath.Join("abs", p)
		}
		dst := filepath.Join(root, "home", rel)
		copies[p] = dst
		if _, err := os.Lstat(dst); err == nil {
			continue
		}
		n, err := copyTree(p, dst, homeCopyMax-total)
		total += n
		if errors.Is(err, errTooBig) {
			return nil, exit.Usagef("--sandbox-home task: %s holds more than %d MiB to copy for the task (use the shared home, or move old sessions out of it)", p, homeCopyMax>>20)
		}
		if err != nil {
			return nil, fmt.Errorf("sandbox home: copy %s: %w", p, err)
		}
	}
	return copies, nil
}

var errTooBig = errors.New("too big to copy")

// copyTree copies src to dst: directories, regular files (mode kept),
// links as links (not followed); FIFOs, sockets and devices are left
// out. A missing src makes an empty directory when src names one in the
// profile's way ("~/.claude/" was made by Prepare: it exists). It returns
// the bytes copied, and errTooBig past limit.
func copyTree(src, dst string, limit int64) (int64, error) {
	var n int64
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == src {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(to, info.Mode().Perm()|0o700)
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case info.Mode().IsRegular():
			if n += info.Size(); n > limit {
				return errTooBig
			}
			return copyFile(p, to, info.Mode().Perm())
		}
		return nil // a FIFO, socket or device: not the CLI's state
	})
	return n, err
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm|0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// MapHomePath returns the path that p, as the agent of a task with home
// copies (agent path → copy) sees it, has here: a transcript its hook
// names under ~/.claude lies in the task's copy.
func MapHomePath(copies map[string]string, p string) string {
	best := ""
	for from := range copies {
		if (p == from || strings.HasPrefix(p, from+"/")) && len(from) > len(best) {
			best = from
		}
	}
	if best == "" {
		return p
	}
	return copies[best] + strings.TrimPrefix(p, best)
}
