// Finding profiles by name and merging a config's partial profile over a
// built-in one.

package profile

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/runner-cli/runner/runner/exit"
)

// MergeProfile overlays a partial JSON profile on base and returns the
// result, compiled. Keys present in the JSON replace base's values (lists
// are replaced, not appended); absent keys keep base's. Unknown keys and
// bad regular expressions are errors naming the profile and the key. base
// is not modified; a nil base starts from an empty profile named name.
func MergeProfile(name string, base *Profile, partial []byte) (*Profile, error) {
	var out Profile
	if base != nil {
		b, err := json.Marshal(base)
		if err != nil {
			return nil, fmt.Errorf("profile %q: %w", name, err)
		}
		if err := json.Unmarshal(b, &out); err != nil {
			return nil, fmt.Errorf("profile %q: %w", name, err)
		}
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(partial, &keys); err != nil {
		return nil, fmt.Errorf("profile %q: not a JSON object: %w", name, err)
	}
	known := JSONKeys()
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !known[k] {
			return nil, fmt.Errorf("profile %q: unknown key %q (known keys: %s)", name, k, strings.Join(SortedKeys(known), ", "))
		}
		// Decode key by key so an error names the key.
		one, _ := json.Marshal(map[string]json.RawMessage{k: keys[k]})
		if err := json.Unmarshal(one, &out); err != nil {
			return nil, fmt.Errorf("profile %q: key %q: %v", name, k, err)
		}
	}
	if out.Name == "" {
		out.Name = name
	}
	out.re = nil
	if err := out.Compile(); err != nil {
		return nil, err
	}
	return &out, nil
}

// JSONKeys is the set of JSON names of Profile's fields: the keys a
// profile in the config file may set.
func JSONKeys() map[string]bool {
	out := map[string]bool{}
	t := reflect.TypeOf(Profile{})
	for i := 0; i < t.NumField(); i++ {
		tag, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if tag != "" && tag != "-" {
			out[tag] = true
		}
	}
	return out
}

// SortedKeys returns m's keys in order.
func SortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// FindProfile returns the profile named name from ps.
func FindProfile(ps []*Profile, name string) (*Profile, error) {
	for _, p := range ps {
		if p.Name == name {
			return p, nil
		}
	}
	names := make([]string, 0, len(ps))
	for _, p := range ps {
		names = append(names, p.Name)
	}
	return nil, exit.Usagef("unknown agent %q (known: %s)", name, strings.Join(names, ", "))
}
