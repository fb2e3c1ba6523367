package tmuxctl

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/importcheck"
)

// TestOnlyTmuxctlRunsTmux keeps tmux invocations out of every other
// package's code (a command, an argv, a script that runs tmux) (docs/architecture.md: tmuxctl is the only code that runs tmux), and
// keeps tmuxctl a leaf: it imports no other package of the module. Tests
// elsewhere may run tmux to check what the runner did. The one import
// allowed is internal/transport (the shell quoting shared with remote
// hosts), itself a leaf.
func TestOnlyTmuxctlRunsTmux(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Skip("module root not found")
	}
	// The guard follows the code (go/ast), not a pattern of one call:
	// importcheck.ProgramOwner, whose TestProgramOwnerCatches proves it.
	if n := importcheck.ProgramOwner(t, root, "tmux", "tmuxctl"); n < 100 {
		t.Fatalf("only %d files checked: not the module's root?", n)
	}

	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("glob: %v %v", files, err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasSuffix(f, "_test.go") && (p == importcheck.Module+"internal/importcheck" || p == importcheck.Module+"internal/testenv") {
				continue // a test's helper
			}
			if strings.HasPrefix(p, "github.com/runner-cli/runner") && !slices.Contains(leafPkgs, p) {
				t.Errorf("%s imports %s: tmuxctl is a leaf (but for %s)", f, p, strings.Join(leafPkgs, ", "))
			}
		}
	}
}

const transportPkg = "github.com/runner-cli/runner/internal/transport"

// filelockPkg is the flock helper behind the machine-wide bound on tmux
// clients (slots.go).
const filelockPkg = "github.com/runner-cli/runner/internal/filelock"

// textutilPkg holds the string helpers (a capture's last lines).
const textutilPkg = "github.com/runner-cli/runner/internal/textutil"

// privdirPkg finds this user's private directories (slots, env files,
// ssh control sockets).
const privdirPkg = "github.com/runner-cli/runner/internal/privdir"

// ctxtimePkg has the one Sleep with a context.
const ctxtimePkg = "github.com/runner-cli/runner/internal/ctxtime"

// clockPkg is the module's one wall clock.
const clockPkg = "github.com/runner-cli/runner/internal/clock"

// procinfoPkg reads process facts (a zombie pane's exit status).
const procinfoPkg = "github.com/runner-cli/runner/internal/procinfo"

// subprocPkg starts the tmux client (the module's one subprocess helper).
const subprocPkg = "github.com/runner-cli/runner/internal/subproc"

// leafPkgs are the packages of the module tmuxctl may import.
var leafPkgs = []string{transportPkg, filelockPkg, textutilPkg, privdirPkg, ctxtimePkg, clockPkg, procinfoPkg, subprocPkg}

// TestTransportIsLeaf: what tmuxctl may import imports nothing of the
// module but each other.
func TestTransportIsLeaf(t *testing.T) {
	var rel []string
	for _, pkg := range leafPkgs {
		rel = append(rel, strings.TrimPrefix(pkg, importcheck.Module))
	}
	for _, r := range rel {
		importcheck.Only(t, "../"+r, rel...)
	}
}
