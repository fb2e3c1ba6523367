// Setting a profile's keys from decoded data (a TOML agent file or the
// config's JSON override): one decoder for both, strict about keys and
// types, with the key path of every error.

package profile

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// keyError is an error in one key of a profile: Compile's, and the
// decoder's.
type keyError struct {
	profile string
	key     string // "ready[2]", "hook.kind"
	unknown bool   // the key is no field of the profile
	err     error
}

func (e *keyError) Error() string {
	if e.unknown {
		return fmt.Sprintf("profile %q: unknown key %q (%v)", e.profile, e.key, e.err)
	}
	return fmt.Sprintf("profile %q: key %q: %v", e.profile, e.key, e.err)
}

func (e *keyError) Unwrap() error { return e.err }

// keyErrorf is a keyError of profile's key.
func keyErrorf(profile, key, format string, args ...any) error {
	return &keyError{profile: profile, key: key, err: fmt.Errorf(format, args...)}
}

var durationType = reflect.TypeFor[Duration]()

// decoder sets decoded values (map[string]any, []any, string, bool,
// int64 or float64, as the TOML and JSON decoders give them) on a
// profile's fields, found by their JSON names. A key present replaces the
// field's value (an array replaces the whole list); a table (hook, env) is
// merged key by key into what the field holds.
type decoder struct {
	profile string
	// set, when not nil, is told the path of every value set (not of the
	// tables merged), for the origin of each key.
	set func(path string)
}

// object sets the keys of m on the struct v (addressable), in key order.
func (d *decoder) object(v reflect.Value, m map[string]any, path string) error {
	fields := jsonFields(v.Type())
	for _, k := range slices.Sorted(maps.Keys(m)) {
		i, ok := fields[k]
		p := joinPath(path, k)
		if !ok {
			return &keyError{profile: d.profile, key: p, unknown: true, err: knownKeys(k, fields)}
		}
		if err := d.value(v.Field(i), m[k], p); err != nil {
			return err
		}
	}
	return nil
}

// value sets x on v (addressable), checking x's type against v's.
func (d *decoder) value(v reflect.Value, x any, path string) error {
	if x == nil { // JSON null: the zero value
		v.SetZero()
		d.setPath(path)
		return nil
	}
	t := v.Type()
	want := func(what string) error {
		return keyErrorf(d.profile, path, "want %s, not %s", what, tomlTypeName(x))
	}
	switch {
	case t == durationType:
		switch x.(type) {
		case string, int64, float64:
		default:
			return want(`a duration ("150ms") or milliseconds`)
		}
		b, _ := json.Marshal(x)
		var dur Duration
		if err := dur.UnmarshalJSON(b); err != nil {
			return keyErrorf(d.profile, path, "%v", err)
		}
		v.Set(reflect.ValueOf(dur))
	case t.Kind() == reflect.String:
		s, ok := x.(string)
		if !ok {
			return want("a string")
		}
		v.SetString(s)
	case t.Kind() == reflect.Bool:
		b, ok := x.(bool)
		if !ok {
			return want("true or false")
		}
		v.SetBool(b)
	case t.Kind() == reflect.Int:
		n, ok := asInt(x)
		if !ok {
			return want("an integer")
		}
		v.SetInt(n)
	case t.Kind() == reflect.Slice:
		xs, ok := x.([]any)
		if !ok {
			return want("an array of " + typeWord(t.Elem()))
		}
		if err := d.list(v, xs, path); err != nil {
			return err
		}
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String:
		m, ok := x.(map[string]any)
		if !ok {
			return want("a table of " + typeWord(t.Elem()))
		}
		return d.table(v, m, path)
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct:
		m, ok := x.(map[string]any)
		if !ok {
			return want("a table")
		}
		if v.IsNil() {
			v.Set(reflect.New(t.Elem()))
		}
		return d.object(v.Elem(), m, path)
	case t.Kind() == reflect.Struct:
		m, ok := x.(map[string]any)
		if !ok {
			return want("a table")
		}
		return d.object(v, m, path)
	default:
		return keyErrorf(d.profile, path, "cannot be set (a field of type %s)", t)
	}
	d.setPath(path)
	return nil
}

// list sets the slice v to the array xs, whole.
func (d *decoder) list(v reflect.Value, xs []any, path string) error {
	s := reflect.MakeSlice(v.Type(), len(xs), len(xs))
	elems := *d
	elems.set = nil // the list is set whole, by value
	for i, e := range xs {
		if err := elems.value(s.Index(i), e, path+"["+strconv.Itoa(i)+"]"); err != nil {
			return err
		}
	}
	v.Set(s)
	return nil
}

// table sets the keys of m in the map v (made when nil).
func (d *decoder) table(v reflect.Value, m map[string]any, path string) error {
	t := v.Type()
	if v.IsNil() {
		v.Set(reflect.MakeMap(t))
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		e := reflect.New(t.Elem()).Elem()
		if err := d.value(e, m[k], path+"."+k); err != nil {
			return err
		}
		v.SetMapIndex(reflect.ValueOf(k), e)
	}
	return nil
}

func (d *decoder) setPath(path string) {
	if d.set != nil {
		d.set(path)
	}
}

// asInt reads an integer: TOML's int64, or a JSON number without a
// fraction.
func asInt(x any) (int64, bool) {
	switch n := x.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int64(n), true
		}
	}
	return 0, false
}

// typeWord names what a value of t is, for an error.
func typeWord(t reflect.Type) string {
	switch {
	case t == durationType:
		return "durations"
	case t.Kind() == reflect.String:
		return "strings"
	case t.Kind() == reflect.Struct, t.Kind() == reflect.Pointer:
		return "tables"
	case t.Kind() == reflect.Int:
		return "integers"
	}
	return t.String()
}

// profileFields are jsonFields of the profile's struct types, made once.
var profileFields = sync.OnceValue(func() map[reflect.Type]map[string]int {
	out := map[reflect.Type]map[string]int{}
	for _, t := range []reflect.Type{reflect.TypeFor[Profile](), reflect.TypeFor[Hook](), reflect.TypeFor[TrustDialog](), reflect.TypeFor[LeaveView](), reflect.TypeFor[AskMode]()} {
		out[t] = fieldsByJSONName(t)
	}
	return out
})

// jsonFields maps the JSON names of t's fields to their index (the
// caller must not change the map).
func jsonFields(t reflect.Type) map[string]int {
	if m, ok := profileFields()[t]; ok {
		return m
	}
	return fieldsByJSONName(t)
}

func fieldsByJSONName(t reflect.Type) map[string]int {
	out := map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.IsExported() && tag != "" && tag != "-" {
			out[tag] = i
		}
	}
	return out
}

// knownKeys says what key k may have meant, and lists the known ones.
func knownKeys(k string, fields map[string]int) error {
	names := slices.Sorted(maps.Keys(fields))
	best, bestD := "", 3
	for _, n := range names {
		if d := editDistance(k, n); d < bestD {
			best, bestD = n, d
		}
	}
	if best != "" {
		return fmt.Errorf("did you mean %q? known keys: %s", best, strings.Join(names, ", "))
	}
	return fmt.Errorf("known keys: %s", strings.Join(names, ", "))
}

// editDistance is the Levenshtein distance of a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// clone returns a deep copy of p's data (lists, tables, the hook); the
// compiled patterns and the origins, never changed once made, are
// shared.
func (p *Profile) clone() *Profile {
	q := *p
	deepCopy(reflect.ValueOf(&q).Elem())
	return &q
}

// deepCopy replaces every slice, map and pointer among v's exported
// fields (recursively) with a copy.
func deepCopy(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				deepCopy(v.Field(i))
			}
		}
	case reflect.Slice:
		if v.IsNil() {
			return
		}
		s := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		reflect.Copy(s, v)
		for i := range s.Len() {
			deepCopy(s.Index(i))
		}
		v.Set(s)
	case reflect.Map:
		if v.IsNil() {
			return
		}
		m := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(it.Value())
			deepCopy(e)
			m.SetMapIndex(it.Key(), e)
		}
		v.Set(m)
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		n := reflect.New(v.Type().Elem())
		n.Elem().Set(v.Elem())
		deepCopy(n.Elem())
		v.Set(n)
	}
}
