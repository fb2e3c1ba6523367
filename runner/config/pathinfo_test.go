package config

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLocate: the path, whether it exists and the variable it comes
// from; none with no variable set.
func TestLocate(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.json")
	env := map[string]string{"RUNNER_CONFIG": file}
	getenv := func(k string) string { return env[k] }
	info, err := Locate(getenv)
	if err != nil || info.Path != file || info.Exists || info.Source != "RUNNER_CONFIG" {
		t.Errorf("missing: %+v %v", info, err)
	}
	if h := ShowHeader(file); h != "# "+file+" does not exist: built-in defaults" {
		t.Errorf("header %q", h)
	}
	os.WriteFile(file, []byte("{}"), 0o600)
	if info, err = Locate(getenv); err != nil || !info.Exists {
		t.Errorf("there: %+v %v", info, err)
	}
	if h := ShowHeader(file); h != "# "+file+" over the built-in defaults" {
		t.Errorf("header %q", h)
	}
	env = map[string]string{}
	if info, err = Locate(getenv); err != nil || info.Path != "" {
		t.Errorf("no variable: %+v %v", info, err)
	}
	if h := ShowHeader(""); h != "# no config file (none of RUNNER_CONFIG, XDG_CONFIG_HOME, HOME is set): built-in defaults" {
		t.Errorf("header %q", h)
	}
}
