package sandbox

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/runner-cli/runner/internal/subproc"
)

// LocalProgram is the sandbox program of this system: Seatbelt's
// sandbox-exec, part of macOS.
const LocalProgram = SeatbeltProgram

// LocalInstallHint says how to get LocalProgram.
const LocalInstallHint = "sandbox-exec is part of macOS (" + SeatbeltProgram + "); a system without it cannot sandbox agents"

// CheckLocal runs a program under sandbox-exec once, with a profile of
// the kind WrapLocal makes; an error wraps ErrUnavailable.
func CheckLocal(ctx context.Context) (string, error) {
	if _, err := os.Stat(SeatbeltProgram); err != nil {
		return "", fmt.Errorf("%w: %s: %v (%s)", ErrUnavailable, SeatbeltProgram, err, LocalInstallHint)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	argv, err := SeatbeltArgv(SeatbeltProgram, Spec{}, "", []string{"/usr/bin/true"})
	if err != nil {
		return "", err
	}
	if err := subproc.Run(subproc.Command(ctx, argv[0], argv[1:]...)); err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrUnavailable, SeatbeltProgram, err)
	}
	return SeatbeltProgram, nil
}

// WrapLocal returns the command line that runs cmd under sandbox-exec as
// spec says (SeatbeltProfile), each path also as it really is (Seatbelt
// matches /private/tmp, not /tmp), TMPDIR the task's temp folder temp.
func WrapLocal(prog string, spec Spec, temp string, cmd []string) ([]string, error) {
	spec.Writable, spec.Pinned = Resolved(spec.Writable), Resolved(spec.Pinned)
	spec.Hidden, spec.Masked = Resolved(spec.Hidden), Resolved(spec.Masked)
	spec.ReadOnly, spec.Open = Resolved(spec.ReadOnly), Resolved(spec.Open)
	spec.OpenRO, spec.Sockets = Resolved(spec.OpenRO), Resolved(spec.Sockets)
	if temp != "" {
		if err := os.MkdirAll(temp, 0o700); err != nil {
			return nil, fmt.Errorf("sandbox: the task's temp folder: %w", err)
		}
		spec.Writable = append(spec.Writable, Resolved([]string{temp})...)
	}
	return SeatbeltArgv(prog, spec, temp, cmd)
}
