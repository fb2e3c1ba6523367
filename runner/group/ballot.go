package group

import (
	"strings"

	"github.com/runner-cli/runner/internal/textutil"
)

// readVote reads a shadow's answer for its ballot: the candidate its
// first "VOTE: t_…" line names (lower case; "" none) and its first
// "REASON: …" line. Only the voter's own lines count: a line it quotes
// (its first sign "|" or ">", as the ballot's prompt quotes the other
// candidates' answers and diffs) is not read, so a candidate's answer
// saying "VOTE: t_x" is no ballot however it is echoed. Lines are split
// at every line break textutil.Lines knows. Markdown around the word
// ("**VOTE:** t_b", "- vote: T_B") is allowed.
func readVote(answer string) (choice, reason string) {
	for _, l := range textutil.Lines(answer) {
		s := strings.TrimLeft(l, " \t")
		if strings.HasPrefix(s, "|") || strings.HasPrefix(s, ">") {
			continue
		}
		s = strings.TrimLeftFunc(s, notWord)
		switch {
		case choice == "" && hasPrefixFold(s, "VOTE:"):
			id := strings.ToLower(strings.TrimLeftFunc(s[len("VOTE:"):], notWord))
			if n := idLen(id); n > 0 {
				choice = id[:n]
			}
		case reason == "" && hasPrefixFold(s, "REASON:"):
			reason = strings.TrimSpace(s[len("REASON:"):])
		}
	}
	return choice, reason
}

// idLen is the length of the task id s starts with ("t_" and at least
// one letter or digit), 0 for none.
func idLen(s string) int {
	if !strings.HasPrefix(s, "t_") {
		return 0
	}
	n := 2
	for n < len(s) && (s[n] >= '0' && s[n] <= '9' || s[n] >= 'a' && s[n] <= 'z') {
		n++
	}
	if n == 2 {
		return 0
	}
	return n
}

// notWord is regexp's \W: not an ASCII letter, digit or '_'.
func notWord(r rune) bool {
	return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_')
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
