package doctor

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestPlatformCheck: an npm wrapper (Factory Droid's @factory/cli 0.225.1,
// laid out as a global install in a prefix) whose platform package for
// this machine is not installed fails the check, saying what to install
// where; once it is beside the wrapper, the check has nothing to say.
func TestPlatformCheck(t *testing.T) {
	plat := nodePlatform(runtime.GOOS, runtime.GOARCH)
	prefix := t.TempDir()
	pkg := filepath.Join(prefix, "lib", "node_modules", "@factory", "cli")
	write := func(p, s string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(pkg, "package.json"), `{"name":"@factory/cli","version":"0.225.1","bin":{"droid":"bin/droid"},
		"optionalDependencies":{"@factory/cli-`+plat+`":"0.225.1","@factory/cli-`+plat+`-baseline":"0.225.1","@factory/cli-other-os":"0.225.1"}}`, 0o644)
	write(filepath.Join(pkg, "bin", "droid"), "#!/usr/bin/env node\nrequire('../platform.js')\n", 0o755)
	bin := filepath.Join(prefix, "bin", "droid")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "lib", "node_modules", "@factory", "cli", "bin", "droid"), bin); err != nil {
		t.Fatal(err)
	}
	c, ok := platformCheck("droid", bin)
	if !ok || c.Status != CheckFail || !strings.Contains(c.Detail, "@factory/cli-"+plat+" or @factory/cli-"+plat+"-baseline") ||
		!strings.Contains(c.Fix, "npm install -g --prefix "+prefix+" @factory/cli-"+plat+"@0.225.1") {
		t.Fatalf("without its platform package: %+v, %v", c, ok)
	}
	// The baseline build (older CPUs) counts as well.
	base := filepath.Join(prefix, "lib", "node_modules", "@factory", "cli-"+plat+"-baseline", "package.json")
	write(base, `{"name":"@factory/cli-`+plat+`-baseline","version":"0.225.2"}`, 0o644)
	if c, ok := platformCheck("droid", bin); ok {
		t.Errorf("with the baseline package beside it: %+v", c)
	}
	os.Remove(base)
	write(filepath.Join(pkg, "node_modules", "@factory", "cli-"+plat, "package.json"), `{"name":"x","version":"0.225.2"}`, 0o644)
	if c, ok := platformCheck("droid", bin); ok {
		t.Errorf("with the platform package in its node_modules: %+v", c)
	}
	// A package that names no platform package: nothing to say.
	if c, ok := platformCheck("sh", "/bin/sh"); ok {
		t.Errorf("/bin/sh: %+v", c)
	}
}
