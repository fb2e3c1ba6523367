package doctor

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/atomicfile"
)

// versionCacheMax bounds the entries CachedVersion's cache keeps.
const versionCacheMax = 64

// CachedVersionTimeout bounds one version read of CachedVersion: a task's
// start waits on it (dispatch --permissions ask), once per installed
// version, so it gets the time a Node CLI's cold start takes on a loaded
// machine (claude --version outlasted doctor's 3 s at a load of 111 on 2
// cores, and the dispatch was refused).
const CachedVersionTimeout = 20 * time.Second

// CachedVersion reads the version of the CLI at path (as ReadVersion, each
// read bounded by CachedVersionTimeout), remembered in the user's cache
// directory (runner/cli-versions.json) for the file it runs as it is: its
// real path, size and modification time, so an upgrade reads again. A read
// that fails is tried once more and never remembered. cacheDir "" means
// os.UserCacheDir.
func CachedVersion(ctx context.Context, cacheDir, path string, args []string) (string, error) {
	key := versionKey(path, args)
	file := ""
	if key != "" {
		if cacheDir == "" {
			cacheDir, _ = os.UserCacheDir()
		}
		if cacheDir != "" {
			file = filepath.Join(cacheDir, "runner", "cli-versions.json")
		}
	}
	cache := map[string]string{}
	if file != "" {
		if b, err := os.ReadFile(file); err == nil {
			_ = json.Unmarshal(b, &cache)
		}
		if v, ok := cache[key]; ok && v != "" {
			return v, nil
		}
	}
	v, err := readVersion(ctx, path, args, CachedVersionTimeout)
	if err != nil && ctx.Err() == nil {
		v, err = readVersion(ctx, path, args, CachedVersionTimeout)
	}
	if err != nil || file == "" || v == "" {
		return v, err
	}
	if len(cache) >= versionCacheMax {
		cache = map[string]string{}
	}
	cache[key] = v
	if b, err := json.Marshal(cache); err == nil && os.MkdirAll(filepath.Dir(file), 0o700) == nil {
		_ = atomicfile.Write(file, b, 0o600, false) // a cache: a lost write reads again
	}
	return v, nil
}

// versionKey names the file path runs as it is now ("" when it cannot be
// found): its real path, size and modification time, and the arguments.
func versionKey(path string, args []string) string {
	p, err := exec.LookPath(path)
	if err != nil {
		return ""
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return ""
	}
	fi, err := os.Stat(real)
	if err != nil {
		return ""
	}
	return strings.Join(append([]string{real, strconv.FormatInt(fi.Size(), 10), strconv.FormatInt(fi.ModTime().UnixNano(), 10)}, args...), "\x00")
}
