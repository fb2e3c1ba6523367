package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/runner-cli/runner/tmuxctl"
)

// block is one block of a coverage profile: its span and whether it ran.
type block struct {
	startLine, startCol, endLine, endCol int
	ran                                  bool
}

// coverage is which blocks of each file ran, by file (as the profile
// names it: import path/file name).
type coverage map[string][]block

// ran reports whether the statement at pos ran: the block that holds it
// did (a position in no block did not).
func (c coverage) ran(name string, pos token.Position) bool {
	for _, b := range c[name] {
		after := pos.Line > b.startLine || (pos.Line == b.startLine && pos.Column >= b.startCol)
		before := pos.Line < b.endLine || (pos.Line == b.endLine && pos.Column <= b.endCol)
		if after && before {
			return b.ran
		}
	}
	return false
}

// parseCoverage reads a text coverage profile (go tool covdata textfmt).
func parseCoverage(data []byte) (coverage, error) {
	c := coverage{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "mode:") || line == "" {
			continue
		}
		// name:l1.c1,l2.c2 stmts count
		colon := strings.LastIndex(line, ":")
		f := strings.Fields(line[colon+1:])
		if colon < 0 || len(f) != 3 {
			return nil, fmt.Errorf("coverage line %q", line)
		}
		var b block
		if _, err := fmt.Sscanf(f[0], "%d.%d,%d.%d", &b.startLine, &b.startCol, &b.endLine, &b.endCol); err != nil {
			return nil, fmt.Errorf("coverage line %q: %w", line, err)
		}
		n, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("coverage line %q: %w", line, err)
		}
		b.ran = n > 0
		name := line[:colon]
		c[name] = append(c[name], b)
	}
	for _, bs := range c {
		sort.Slice(bs, func(i, j int) bool { return bs[i].startLine < bs[j].startLine })
	}
	return c, sc.Err()
}

// runDispatch builds runner with coverage, runs one foreground dispatch
// of the sim agent with no other flag (`runner dispatch --agent sim DIR
// TEXT`) in a throw-away HOME, with a tmux server and start slots of its
// own, in a folder that is no git repository, and returns the coverage of
// the dispatch's own process (not of the agent's, nor of its hooks'),
// written to keep too ("": not kept).
func runDispatch(root, keep string, log func(string, ...any)) (coverage, error) {
	tmp, err := os.MkdirTemp("/tmp", "dwalk")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "runner")
	log("building runner with coverage")
	build := exec.Command("go", "build", "-cover", "-covermode=set", "-coverpkg="+module+"/...", "-o", bin, "./cmd/runner")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build -cover: %v: %s", err, out)
	}
	home, covAll, proj, run := filepath.Join(tmp, "home"), filepath.Join(tmp, "cov"), filepath.Join(tmp, "proj"), filepath.Join(tmp, "run")
	for _, d := range []string{home, covAll, proj, run} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, err
		}
	}
	sock := filepath.Join(tmp, "s")
	defer func() { _ = tmuxctl.New(sock).KillServer(context.Background()) }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "dispatch", "--agent", "sim", proj, "write hello.txt hi")
	cmd.Dir = proj
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "TERM=xterm-256color", "HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_STATE_HOME=" + filepath.Join(home, ".local/state"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "XDG_RUNTIME_DIR=" + run, "TMPDIR=" + tmp,
		"RUNNER_TMUX_SOCKET=" + sock, "GOCOVERDIR=" + covAll}
	log("running a dispatch of the sim agent")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("the dispatch: %v: %s", err, out)
	}
	// The dispatch's own counters: its pid is in their file's name.
	cov := filepath.Join(tmp, "own")
	if err := os.Mkdir(cov, 0o700); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(covAll)
	if err != nil {
		return nil, err
	}
	pid := "." + strconv.Itoa(cmd.Process.Pid) + "."
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "covmeta.") || strings.Contains(e.Name(), pid) {
			if err := os.Rename(filepath.Join(covAll, e.Name()), filepath.Join(cov, e.Name())); err != nil {
				return nil, err
			}
		}
	}
	prof := filepath.Join(tmp, "cover.txt")
	conv := exec.Command("go", "tool", "covdata", "textfmt", "-i="+cov, "-o="+prof)
	conv.Dir = root
	if out, err := conv.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go tool covdata: %v: %s", err, out)
	}
	data, err := os.ReadFile(prof)
	if err != nil {
		return nil, err
	}
	if keep != "" {
		if err := os.WriteFile(keep, data, 0o600); err != nil {
			return nil, err
		}
	}
	return parseCoverage(data)
}
