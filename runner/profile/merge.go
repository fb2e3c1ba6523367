// Finding profiles by name and merging a config's partial profile over a
// built-in one.

package profile

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/runner-cli/runner/runner/fault"
)

// MergeProfile overlays a partial JSON profile on base and returns the
// result, compiled. Keys present in the JSON replace base's values (lists
// are replaced, not appended; a table — hook, env — is merged key by key);
// absent keys keep base's. Unknown keys (nested ones too), values of the
// wrong type and bad regular expressions are errors naming the profile and
// the key. base is not modified; a nil base starts from an empty profile
// named name.
func MergeProfile(name string, base *Profile, partial []byte) (*Profile, error) {
	return MergeProfileFrom("", name, base, partial)
}

// MergeProfileFrom is MergeProfile for a partial profile read from file
// (the config file): file is kept as the origin of the keys it sets.
func MergeProfileFrom(file, name string, base *Profile, partial []byte) (*Profile, error) {
	var keys map[string]any
	if err := json.Unmarshal(partial, &keys); err != nil || keys == nil {
		if err == nil {
			err = fmt.Errorf("%s", strings.TrimSpace(string(partial)))
		}
		return nil, fmt.Errorf("profile %q: not a JSON object: %w", name, err)
	}
	out := &Profile{}
	if base != nil {
		out = base.clone()
	}
	o := out.newOrigins(Origin{File: file}, nil)
	d := decoder{profile: name, set: o.set}
	if err := d.object(reflect.ValueOf(out).Elem(), keys, ""); err != nil {
		return nil, err
	}
	if out.Name == "" {
		out.Name = name
	}
	if file != "" {
		out.sources = append(out.sources[:len(out.sources):len(out.sources)], Origin{File: file})
	}
	out.re = nil
	if err := out.Compile(); err != nil {
		return nil, err
	}
	return out, nil
}

// JSONKeys is the set of JSON names of Profile's fields: the keys a
// profile in the config file may set.
func JSONKeys() map[string]bool {
	out := map[string]bool{}
	for k := range jsonFields(reflect.TypeFor[Profile]()) {
		out[k] = true
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
	return nil, fault.Usagef("unknown agent %q (known: %s)", name, strings.Join(names, ", "))
}
