package importcheck

import "testing"

// TestShellScriptsAreConstant: every sh -c of the module runs constant
// text; what comes from users (task texts, project and host paths,
// messages) only ever reaches a shell as a positional argument.
func TestShellScriptsAreConstant(t *testing.T) {
	ShellScripts(t, "../..",
		ShellWrapper{Name: "sh", Param: "script", Arg: 1},        // gitsnap's remoteFS.sh(ctx, script, args...)
		ShellWrapper{Name: "hostShell", Param: "script", Arg: 2}, // tmuxctl's Client.hostShell(ctx, stdin, script, args...)
	)
}

// TestShellScriptsCatches: the check fails on a script built from a value.
func TestShellScriptsCatches(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir+"/x.go", "package x\n\nfunc f(name string) []string {\n\treturn []string{\"sh\", \"-c\", \"echo \" + name}\n}\n")
	ft := &fakeT{TB: t}
	ShellScripts(ft, dir)
	if ft.errors != 1 {
		t.Fatalf("%d errors on a script built from a parameter, want 1", ft.errors)
	}
}
