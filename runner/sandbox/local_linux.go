package sandbox

import "context"

// LocalProgram is the sandbox program of this system: bubblewrap.
const LocalProgram = Program

// LocalInstallHint says how to get LocalProgram.
const LocalInstallHint = InstallHint

// CheckLocal is Check for this system's sandbox.
func CheckLocal(ctx context.Context) (string, error) { return Check(ctx) }

// WrapLocal returns the command line that runs cmd in this system's
// sandbox (the program at prog, found with LocalProgram) as spec says.
// temp is the task's own temp folder, for systems without a private /tmp
// (bwrap makes one: unused here).
func WrapLocal(prog string, spec Spec, temp string, cmd []string) ([]string, error) {
	return Argv(prog, spec, cmd), nil
}
