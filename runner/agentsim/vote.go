package agentsim

import (
	"strings"

	"github.com/runner-cli/runner/internal/textutil"
)

// A group's ballot prompt (runner vote): its request line, and a line per
// other candidate.
var (
	voteAskRE       = textutil.LazyRegexp(`(?m)^Reply with one line "VOTE: <candidate id>"`)
	voteCandidateRE = textutil.LazyRegexp(`(?m)^Candidate (t_[0-9a-z]+) \(agent [^)]*\): status (\S+); check (.*)$`)
)

// simVote answers a ballot prompt as the simulated agent votes, the same
// way every time: for the first candidate listed whose check passed (or
// that has none), else the first done, else the first. ok is false for
// any other prompt.
func simVote(prompt string) (answer string, ok bool) {
	if !voteAskRE.Re().MatchString(prompt) {
		return "", false
	}
	cands := voteCandidateRE.Re().FindAllStringSubmatch(prompt, -1)
	if len(cands) == 0 {
		return "", false
	}
	pick, why := cands[0][1], "the first candidate listed"
	for _, c := range cands {
		if c[2] == "done" && (c[3] == "passed" || c[3] == "none") {
			return "VOTE: " + c[1] + "\nREASON: sim: done, and its check " + strings.TrimSpace(c[3]), true
		}
	}
	for _, c := range cands {
		if c[2] == "done" {
			pick, why = c[1], "the first candidate done"
			break
		}
	}
	return "VOTE: " + pick + "\nREASON: sim: " + why, true
}
