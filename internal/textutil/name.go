package textutil

import "strings"

// IsName reports whether s is 1 to max bytes of ASCII letters and digits,
// with also the bytes of punct after the first: the regexp
// ^[A-Za-z0-9][A-Za-z0-9<punct>]{0,max-1}$, or with upper false
// ^[a-z0-9][a-z0-9<punct>]{0,max-1}$. A loop rather than that regexp: a
// bounded repetition compiles to max copies of its class, which a
// package-level regexp paid in every runner process's start.
func IsName(s string, max int, upper bool, punct string) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case upper && 'A' <= c && c <= 'Z':
		case i > 0 && strings.IndexByte(punct, c) >= 0:
		default:
			return false
		}
	}
	return true
}
