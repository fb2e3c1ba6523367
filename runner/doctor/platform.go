package doctor

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// nodePlatform is node's name of this machine's platform and CPU
// ("linux-x64"), which npm wrappers put in their platform packages'
// names.
func nodePlatform(goos, goarch string) string {
	plat := map[string]string{"windows": "win32"}[goos]
	if plat == "" {
		plat = goos
	}
	arch := map[string]string{"amd64": "x64", "386": "ia32"}[goarch]
	if arch == "" {
		arch = goarch
	}
	return plat + "-" + arch
}

// platformCheck is the check of an agent CLI whose npm package is a
// wrapper around a binary in a platform package of its
// optionalDependencies (@factory/cli and @factory/cli-linux-x64): none of
// those for this machine installed beside it, the CLI does not start
// (npm skips an optional package the registry does not serve at the
// wrapper's exact version). ok is false for a CLI that is no such
// wrapper, or has its platform package.
func platformCheck(name, path string) (Check, bool) {
	script, err := filepath.EvalSymlinks(path)
	if err != nil {
		return Check{}, false
	}
	pj, dir, ok := findPackageDir(script)
	if !ok {
		return Check{}, false
	}
	missing := missingPlatform(pj, dir, nodePlatform(runtime.GOOS, runtime.GOARCH))
	if len(missing) == 0 {
		return Check{}, false
	}
	want := missing[0] + "@" + pj.OptionalDependencies[missing[0]]
	install := "npm install -g " + want
	if i := strings.LastIndex(dir, string(filepath.Separator)+filepath.Join("lib", "node_modules")+string(filepath.Separator)); i > 0 {
		install = "npm install -g --prefix " + dir[:i] + " " + want
	}
	return Check{Name: "platform:" + name, Status: CheckFail,
		Detail: fmt.Sprintf("%s (%s) finds no binary for %s: its platform package %s is not installed beside it",
			name, strings.TrimSpace(pj.Name+" "+pj.Version), nodePlatform(runtime.GOOS, runtime.GOARCH), strings.Join(missing, " or ")),
		Fix: install + " (when that version is not served, the newest of its line: npm view " + missing[0] + " versions; scripts/install-agents.sh does this)",
	}, true
}

// missingPlatform returns the platform packages for plat ("linux-x64")
// that the package in dir names among its optionalDependencies, when none
// of them is installed where node finds it (dir's node_modules, or one
// of its parents' folders); nil when one is, or it names none.
func missingPlatform(pj packageJSON, dir, plat string) []string {
	var names []string
	for n := range pj.OptionalDependencies {
		if strings.HasSuffix(n, "-"+plat) || strings.Contains(n, "-"+plat+"-") {
			names = append(names, n)
		}
	}
	slices.SortFunc(names, func(a, b string) int { return len(a) - len(b) }) // "…-linux-x64" before "…-linux-x64-baseline"
	for _, n := range names {
		if installedFrom(dir, n) {
			return nil
		}
	}
	return names
}

// installedFrom says node finds package name from dir: in a node_modules
// folder of dir or of a parent, or beside dir's own package in the
// node_modules it is in (a global install's lib/node_modules).
func installedFrom(dir, name string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		candidates := []string{filepath.Join(d, "node_modules", name)}
		if filepath.Base(d) == "node_modules" {
			candidates = append(candidates, filepath.Join(d, name))
		}
		for _, c := range candidates {
			if _, err := os.Stat(filepath.Join(c, "package.json")); err == nil {
				return true
			}
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}
