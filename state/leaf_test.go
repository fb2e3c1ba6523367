package state

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// state is a leaf: of the module it imports only internal/ helpers
// (filelock, itself a leaf over gofrs/flock, atomicfile, textutil,
// untrusted and the one clock) and runs no tmux or git.
func TestStateIsALeaf(t *testing.T) {
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
			exec := p == "os/exec" && !strings.HasSuffix(f, "_test.go") // tests re-exec themselves
			if strings.HasSuffix(f, "_test.go") && p == "github.com/runner-cli/runner/internal/testenv" {
				continue // every test binary's TestMain
			}
			if strings.HasPrefix(p, "github.com/runner-cli/runner") && p != "github.com/runner-cli/runner/internal/filelock" && p != "github.com/runner-cli/runner/internal/atomicfile" && p != "github.com/runner-cli/runner/internal/textutil" && p != "github.com/runner-cli/runner/internal/clock" && p != "github.com/runner-cli/runner/internal/untrusted" || exec {
				t.Errorf("%s imports %s", f, p)
			}
		}
	}
}
