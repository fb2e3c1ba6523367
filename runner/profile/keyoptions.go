package profile

import (
	"strings"

	"github.com/runner-cli/runner/internal/textutil"
)

// KeyOption is one option of a dialog without a numbered menu, read with
// a profile's key_options: the key that chooses it and its label.
type KeyOption struct {
	Key, Label string
}

// validKey is a key an option may have: one letter or digit (a key
// runner presses, never a tmux key name or text read off a screen).
var validKey = textutil.LazyRegexp(`^[A-Za-z0-9]$`)

// KeyOptions reads the options on lines with p's key_options, in order,
// each key once (nil when p has no key_options or none match). A match
// whose key is not one letter or digit is no option.
func KeyOptions(p *Profile, lines []string) []KeyOption {
	c := p.patterns()
	if c == nil || c.keyOptions == nil {
		return nil
	}
	re := c.keyOptions
	ki, li := re.SubexpIndex("key"), re.SubexpIndex("label")
	var out []KeyOption
	seen := map[string]bool{}
	for _, l := range lines {
		for _, m := range re.FindAllStringSubmatch(l, -1) {
			key := m[ki]
			if !validKey.Re().MatchString(key) || seen[key] {
				continue
			}
			label := ""
			if li >= 0 {
				label = m[li]
			} else {
				label = strings.NewReplacer("[", "", "]", "", "(", "", ")", "").Replace(m[0])
			}
			seen[key] = true
			out = append(out, KeyOption{Key: key, Label: strings.Join(strings.Fields(label), " ")})
		}
	}
	return out
}
