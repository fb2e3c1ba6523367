// The line of a dialog that asks: what the supervisor says, records and
// runner answer shows.

package profile

import (
	"strings"

	"github.com/runner-cli/runner/internal/textutil"
)

// DialogLine is the line of a dialog that asks. The dialog's first menu,
// needs-input or trust line ends the search; a trust line that is not a
// menu item is itself the question (the sim's "Do you trust the files in
// this folder?"). Above it (the question's text also holds what the agent
// printed before it), the last line that asks — it holds a '?' — wins
// (Claude's "Quick safety check: Is this a project you … trust?" above
// "❯ 1. Yes, I trust this folder"); else the dialog's own question when it
// says what it is about ("Do you want to create hello.txt?", not "Do you
// want to proceed?"); else the last non-blank line that is not a menu
// item.
func DialogLine(p *Profile, q string) string {
	if !p.Compiled() {
		return textutil.Headline(q, 160)
	}
	lines := strings.Split(q, "\n")
	stop := len(lines)
	for i, l := range lines {
		if p.MatchesNeedsInput(l) || p.MatchesTrust(l) {
			stop = i
			break
		}
	}
	if stop < len(lines) && p.MatchesTrust(lines[stop]) && !menuItem.Re().MatchString(lines[stop]) {
		return textutil.ClipRunes(strings.TrimSpace(lines[stop]), 160)
	}
	asks, last := "", ""
	for _, l := range lines[:stop] {
		if strings.TrimSpace(l) == "" || menuItem.Re().MatchString(l) {
			continue
		}
		last = l
		if strings.Contains(l, "?") {
			asks = l
		}
	}
	if asks != "" {
		last = asks
	} else if stop < len(lines) && strings.Contains(lines[stop], "?") && !menuItem.Re().MatchString(lines[stop]) &&
		!genericConfirm.Re().MatchString(strings.TrimSpace(lines[stop])) {
		// Nothing above asks (a file's preview, a command): the
		// dialog's own question, when it says what it is about
		// ("Do you want to create hello.txt?").
		last = lines[stop]
	}
	if last == "" {
		return textutil.Headline(q, 160)
	}
	return textutil.ClipRunes(strings.TrimSpace(last), 160)
}

// genericConfirm is a dialog question that says nothing of what it is
// about: the line above it does.
var genericConfirm = textutil.LazyRegexp(`(?i)^(do you want to |would you like to )?(proceed|continue)\s*\??$`)

// menuItem is a numbered choice of a dialog ("❯ 1. Yes", "  2. No",
// "› 1. Trust and continue").
var menuItem = textutil.LazyRegexp(`^\s*[❯›>●]?\s*\d+\.\s`)
