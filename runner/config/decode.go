// Decoding the config file strictly: unknown keys, wrong types and bad
// durations are errors that name the key, its line and column.

package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/runner-cli/runner/runner/profile"
)

// Parse decodes data over DefaultConfig and validates the result.
// Errors name the key path ("awareness.mode: …") or, for bad JSON, the
// line and column.
func Parse(data []byte) (*Config, error) { return parse(data, "", nil) }

// parse is Parse for the config file path (the origin of its profile
// overrides), with the user's agent files.
func parse(data []byte, path string, files []*profile.File) (*Config, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("the file is empty (write {} for the defaults, or delete it)")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			// Offset counts the offending byte.
			line, col := lineCol(data, se.Offset-1)
			return nil, fmt.Errorf("line %d, column %d: bad JSON: %v", line, col, strings.TrimPrefix(se.Error(), "json: "))
		}
		return nil, errors.New("want a JSON object ({ \"key\": value, … }) at the top")
	}
	c := DefaultConfig()
	c.path, c.agentFiles = path, files
	fileAliases := map[string]map[string]string(nil)
	for _, k := range slices.Sorted(maps.Keys(top)) {
		raw := top[k]
		switch k {
		case "awareness":
			if err := decodeObject("awareness", raw, &c.Awareness); err != nil {
				return nil, err
			}
		case "model_aliases":
			a, err := decodeAliases(raw)
			if err != nil {
				return nil, err
			}
			fileAliases = a
		case "profiles":
			if err := decodeValue(k, raw, &c.ProfileOverrides); err != nil {
				return nil, err
			}
		default:
			if err := decodeField(c, k, k, raw); err != nil {
				return nil, err
			}
		}
	}
	if err := c.validate(fileAliases); err != nil {
		return nil, err
	}
	return c, nil
}

// decodeAliases decodes model_aliases: {profile: {alias: model}}, naming
// the profile and the alias in errors.
func decodeAliases(raw json.RawMessage) (map[string]map[string]string, error) {
	var byProfile map[string]json.RawMessage
	if err := decodeValue("model_aliases", raw, &byProfile); err != nil {
		return nil, err
	}
	out := map[string]map[string]string{}
	for prof, r := range byProfile {
		var aliases map[string]json.RawMessage
		if err := decodeValue("model_aliases."+prof, r, &aliases); err != nil {
			return nil, err
		}
		out[prof] = map[string]string{}
		for alias, m := range aliases {
			var model string
			if err := decodeValue("model_aliases."+prof+"."+alias, m, &model); err != nil {
				return nil, err
			}
			out[prof][alias] = model
		}
	}
	return out, nil
}

// decodeObject decodes a JSON object into the struct dst key by key, so an
// unknown key or a bad value is named with its path.
func decodeObject(path string, raw json.RawMessage, dst any) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return fmt.Errorf("%s: want a JSON object", path)
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if err := decodeField(dst, path+"."+k, k, m[k]); err != nil {
			return err
		}
	}
	return nil
}

// decodeField decodes raw into the field of the struct pointed to by dst
// whose JSON name is key; path names it in errors.
func decodeField(dst any, path, key string, raw json.RawMessage) error {
	v := reflect.ValueOf(dst).Elem()
	names := jsonFieldNames(v.Type())
	i, ok := names[key]
	if !ok {
		return fmt.Errorf("%s: unknown key (known keys: %s)", path, strings.Join(slices.Sorted(maps.Keys(names)), ", "))
	}
	return decodeValue(path, raw, v.Field(i).Addr().Interface())
}

// decodeValue decodes one value, refusing null and (for durations) bare
// numbers, and turns json's type errors into "want …, got …".
func decodeValue(path string, raw json.RawMessage, dst any) error {
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		return fmt.Errorf("%s: null is not a value here (remove the key to get the default)", path)
	}
	if reflect.TypeOf(dst).Elem() == reflect.TypeFor[profile.Duration]() && (len(raw) == 0 || raw[0] != '"') {
		return fmt.Errorf("%s: want a duration string like \"30s\" or \"1h\", got %s", path, raw)
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			where := path
			if te.Field != "" {
				where += "." + te.Field
			}
			return fmt.Errorf("%s: want %s, got a JSON %s", where, describeType(te.Type), te.Value)
		}
		return fmt.Errorf("%s: %v", path, strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

func describeType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "a list of " + strings.TrimPrefix(strings.TrimPrefix(describeType(t.Elem()), "a "), "an ") + "s"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

// jsonFieldNames maps the JSON names of t's fields to their indexes.
func jsonFieldNames(t reflect.Type) map[string]int {
	out := map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag != "" && tag != "-" {
			out[tag] = i
		}
	}
	return out
}

// lineCol converts the offset of a byte in data into its 1-based line and
// column.
func lineCol(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}
