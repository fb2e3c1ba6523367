package state

import (
	"crypto/rand"
	"fmt"
	"strings"

	"github.com/runner-cli/runner/internal/textutil"
)

// TaskIDPrefix starts every task id.
const TaskIDPrefix = "t_"

const idAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// NewTaskID returns a fresh task id, "t_" followed by 8 lowercase
// alphanumerics, that is not already in s.Tasks. Call it inside Update so the
// check and the insertion happen under the same lock.
func (s *State) NewTaskID() string {
	for {
		id := newID()
		if _, taken := s.Tasks[id]; !taken {
			return id
		}
	}
}

// RandomTaskID returns a random task id, for a caller that must name files
// after the task before recording it; the Update that records it must check
// the id is free (NewTaskID does that).
func RandomTaskID() string { return newID() }

// newID makes a random id; tests swap it to force collisions.
var newID = randomID

func randomID() string {
	var b [8]byte
	out := make([]byte, 0, len(TaskIDPrefix)+len(b))
	out = append(out, TaskIDPrefix...)
	for len(out) < cap(out) {
		rand.Read(b[:])
		for _, c := range b {
			// 252 = 7*36: reject the tail so every letter is equally likely.
			if c < 252 && len(out) < cap(out) {
				out = append(out, idAlphabet[int(c)%len(idAlphabet)])
			}
		}
	}
	return string(out)
}

// ValidTaskID reports whether id has the shape of a task id.
func ValidTaskID(id string) bool {
	rest, ok := strings.CutPrefix(id, TaskIDPrefix)
	if !ok || len(rest) != 8 {
		return false
	}
	for _, c := range rest {
		if !strings.ContainsRune(idAlphabet, c) {
			return false
		}
	}
	return true
}

// TaskNotFoundError says no task id matches a reference. It gives no hint:
// the caller knows which command lists the tasks it could mean.
type TaskNotFoundError struct{ Ref string }

func (e *TaskNotFoundError) Error() string {
	return fmt.Sprintf("no task matches %q", e.Ref)
}

// Is makes errors.Is(err, ErrTaskNotFound) true.
func (e *TaskNotFoundError) Is(target error) bool { return target == ErrTaskNotFound }

// AmbiguousTaskError says more than one task id starts with a reference.
type AmbiguousTaskError struct {
	Ref     string
	Matches []string // sorted
}

func (e *AmbiguousTaskError) Error() string {
	shown := e.Matches
	more := ""
	if len(shown) > 5 {
		more = fmt.Sprintf(" and %d more", len(shown)-5)
		shown = shown[:5]
	}
	return fmt.Sprintf("task reference %q is ambiguous: it matches %s%s (give more characters)",
		e.Ref, strings.Join(shown, ", "), more)
}

// Is makes errors.Is(err, ErrAmbiguousTask) true.
func (e *AmbiguousTaskError) Is(target error) bool { return target == ErrAmbiguousTask }

// ValidName reports whether name is a valid project or host name:
// [a-z0-9][a-z0-9._-]{0,63}.
func ValidName(name string) bool { return textutil.IsName(name, 64, false, "._-") }

// SuggestName turns an invalid name into a valid one, for an error message.
func SuggestName(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		case r == ' ' || r == '/':
			b.WriteRune('-')
		}
	}
	s := strings.TrimLeft(b.String(), "._-")
	if s == "" {
		return "my-project"
	}
	return s[:min(len(s), 64)]
}
