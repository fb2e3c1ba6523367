// The index a write marshalled, made what a decode of its bytes gives, so
// that the next load of those bytes copies it instead of decoding them.

package state

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// asDecoded changes v (addressable: a value of the index's types) in place
// into what json.Unmarshal of json.Marshal(v) gives: invalid UTF-8 in a
// string as json.Marshal replaces it (each bad byte with U+FFFD); a time as
// its text parses back (no monotonic reading; its zone as time.Parse gives
// it); a slice or map with omitempty, empty, as nil; a field with omitzero
// and zero, or an unexported or "-" one, as its zero value. It reports
// false for anything it does not follow (an interface, a non-string map
// key, a map key that would change, an embedded struct, a ",string"
// option, a []byte): then the caller decodes the bytes as before.
func asDecoded(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	case reflect.String:
		if s := v.String(); !utf8.ValidString(s) {
			v.SetString(asMarshalled(s))
		}
		return true
	case reflect.Pointer:
		return v.IsNil() || asDecoded(v.Elem())
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return false
		}
		for i := range v.Len() {
			if !asDecoded(v.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		return mapAsDecoded(v)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			return timeAsDecoded(v)
		}
		return structAsDecoded(v)
	}
	return false
}

// mapAsDecoded is asDecoded for a map with string keys: a pointer value
// changed where it points, any other value made anew (a map's values
// cannot be changed in place).
func mapAsDecoded(v reflect.Value) bool {
	if v.IsNil() {
		return true
	}
	if v.Type().Key().Kind() != reflect.String {
		return false
	}
	elem := v.Type().Elem()
	if !needsWalk(elem) {
		for it := v.MapRange(); it.Next(); {
			if !utf8.ValidString(it.Key().String()) {
				return false
			}
		}
		return true
	}
	for it := v.MapRange(); it.Next(); {
		if !utf8.ValidString(it.Key().String()) {
			return false
		}
		if x := it.Value(); elem.Kind() == reflect.Pointer {
			if !x.IsNil() && !asDecoded(x.Elem()) {
				return false
			}
			continue
		}
		x := reflect.New(elem).Elem()
		x.Set(it.Value())
		if !asDecoded(x) {
			return false
		}
		v.SetMapIndex(it.Key(), x)
	}
	return true
}

// timeAsDecoded is asDecoded for a time.Time: its text, parsed back.
func timeAsDecoded(v reflect.Value) bool {
	t := v.Interface().(time.Time)
	b, err := t.MarshalJSON()
	if err != nil {
		return false
	}
	var back time.Time
	if back.UnmarshalJSON(b) != nil {
		return false
	}
	v.Set(reflect.ValueOf(back))
	return true
}

// structAsDecoded is asDecoded for a struct's fields, by their json tags
// (read once per type: fieldsOf).
func structAsDecoded(v reflect.Value) bool {
	fs, ok := fieldsOf(v.Type())
	if !ok {
		return false
	}
	for _, f := range fs {
		fv := v.Field(f.index)
		switch {
		case f.drop:
			fv.SetZero()
			continue
		case f.walk && !asDecoded(fv):
			return false
		}
		if f.omitEmpty && emptyValue(fv) || f.omitZero && zeroValue(fv) {
			fv.SetZero()
		}
	}
	return true
}

// field is what structAsDecoded does with one field of a struct.
type field struct {
	index               int
	drop                bool // unexported or "-": never marshalled
	walk                bool // its value may differ after a round trip
	omitEmpty, omitZero bool
}

// structFields holds fieldsOf's answers, per struct type.
var structFields sync.Map // reflect.Type → []field, or nil: not followed

// fieldsOf is the plan of a struct type's fields (false: a field asDecoded
// does not follow, so no value of the type is).
func fieldsOf(t reflect.Type) ([]field, bool) {
	if fs, ok := structFields.Load(t); ok {
		return fs.([]field), fs.([]field) != nil
	}
	var fs []field
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if f.Anonymous || strings.Contains(tag, ",string") {
			structFields.Store(t, []field(nil))
			return nil, false
		}
		_, opts, _ := strings.Cut(tag, ",")
		fs = append(fs, field{index: i, drop: !f.IsExported() || tag == "-", walk: needsWalk(f.Type),
			omitEmpty: hasOpt(opts, "omitempty"), omitZero: hasOpt(opts, "omitzero")})
	}
	structFields.Store(t, fs)
	return fs, true
}

// needsWalk reports whether a value of type t may come back from a round
// trip other than it went: anything but booleans and numbers.
func needsWalk(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return false
	}
	return true
}

// hasOpt reports whether a json tag's options (after the name) hold opt.
func hasOpt(opts, opt string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		if o == opt {
			return true
		}
	}
	return false
}

// zeroValue is encoding/json's zero value for omitzero: by the type's own
// IsZero method when it has one (time.Time's, say), else all zero.
func zeroValue(v reflect.Value) bool {
	type zeroer interface{ IsZero() bool }
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return true
	}
	if z, ok := v.Interface().(zeroer); ok {
		return z.IsZero()
	}
	if z, ok := v.Addr().Interface().(zeroer); ok {
		return z.IsZero()
	}
	return v.IsZero()
}

// emptyValue is encoding/json's empty value for omitempty.
func emptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// asMarshalled is s as json.Marshal writes it and a decode reads it back:
// each byte that does not start a valid UTF-8 sequence becomes U+FFFD.
func asMarshalled(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// decodedIndex is the index ix (which json.Marshal made raw of) as a
// decode of raw gives it, or nil when asDecoded does not follow it. With
// verifyDecoded set (state's tests), it is checked against a decode.
func decodedIndex(ix *indexFile, raw []byte) *indexFile {
	if !asDecoded(reflect.ValueOf(ix).Elem()) {
		return nil
	}
	if verifyDecoded {
		var want indexFile
		if err := json.Unmarshal(raw, &want); err != nil || !reflect.DeepEqual(ix, &want) {
			panic("state: the index as written is not what its bytes decode to: " + string(raw))
		}
	}
	return ix
}

// verifyDecoded makes decodedIndex check each index against a decode of
// its bytes (state's tests set it).
var verifyDecoded bool
