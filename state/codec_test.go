package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// codecTables lists every struct of the state file with its codec table.
// A struct that the file holds but this list lacks fails
// TestCodecCoversEveryField.
var codecTables = map[reflect.Type][]tableField{
	reflect.TypeFor[State]():        tableOf(stateFields),
	reflect.TypeFor[Project]():      tableOf(projectFields),
	reflect.TypeFor[Task]():         tableOf(taskFields),
	reflect.TypeFor[StatusChange](): tableOf(statusChangeFields),
	reflect.TypeFor[Turn]():         tableOf(turnFields),
	reflect.TypeFor[TmuxTarget]():   tableOf(tmuxFields),
	reflect.TypeFor[Message]():      tableOf(messageFields),
}

type tableField struct {
	key string
	opt fieldOpt
}

func tableOf[T any](fields []field[T]) []tableField {
	out := make([]tableField, len(fields))
	for i, f := range fields {
		out[i] = tableField{f.key, f.opt &^ inHeader}
	}
	return out
}

// TestCodecCoversEveryField fails, naming the field, when a json field of a
// struct in the state file is missing from its codec table (or is there
// with other options, or in another order): the fast codec would otherwise
// fall back to encoding/json on every file (decoding) or drop the field
// (encoding).
func TestCodecCoversEveryField(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(typ reflect.Type)
	walk = func(typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || typ == reflect.TypeFor[time.Time]() || seen[typ] {
			return
		}
		seen[typ] = true
		table, ok := codecTables[typ]
		if !ok {
			t.Errorf("state file struct %s has no codec table: add a []field[%s] in codec.go, a field of that kind where it is used, and a line in codecTables", typ.Name(), typ.Name())
			return
		}
		var want []tableField
		for i := range typ.NumField() {
			f := typ.Field(i)
			tag, ok := f.Tag.Lookup("json")
			if !f.IsExported() || tag == "-" {
				continue
			}
			if !ok {
				t.Errorf("%s.%s has no json tag: give it one (the codec tables are keyed by it)", typ.Name(), f.Name)
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			var opt fieldOpt
			for o := range strings.SplitSeq(opts, ",") {
				switch o {
				case "omitempty":
					opt |= omitEmpty
				case "omitzero":
					opt |= omitZero
				case "":
				default:
					t.Errorf("%s.%s: json option %q is not handled by the codec (codec.go)", typ.Name(), f.Name, o)
				}
			}
			want = append(want, tableField{name, opt})
			walk(f.Type)
		}
		for _, w := range want {
			if !slices.Contains(table, w) {
				t.Errorf("%s field %q (options %b) is missing from its codec table in codec.go: add it, in field order", typ.Name(), w.key, w.opt)
			}
		}
		if !slices.Equal(table, want) {
			t.Errorf("codec table of %s = %v, want the json fields in order %v", typ.Name(), table, want)
		}
	}
	walk(reflect.TypeFor[State]())
}

// TestCodecMatchesEncodingJSON is the differential test: on random states
// holding every field (found by reflection, so a new field is covered too),
// with hostile strings, times, numbers, nil and empty slices and maps and
// settings blobs, the fast decoder must return what encoding/json returns
// and the fast encoder must write the bytes json.Marshal writes.
func TestCodecMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	for i := range 400 {
		st := new(State)
		fillRandom(rng, reflect.ValueOf(st).Elem(), 0)
		checkCodec(t, fmt.Sprintf("state %d", i), st)
	}
}

func checkCodec(t *testing.T, name string, st *State) {
	t.Helper()
	full, err := json.Marshal(st)
	if err != nil {
		t.Fatalf("%s: json.Marshal: %v", name, err)
	}
	// Encoding: the body is what json.Marshal writes after the header.
	header, body, err := encode(st, 0)
	if err != nil {
		t.Fatalf("%s: encode: %v", name, err)
	}
	fast, err := encodeFast(nil, st)
	if err != nil {
		t.Fatalf("%s: encodeFast: %v", name, err)
	}
	if !bytes.Equal(fast, body) {
		t.Fatalf("%s: encode used the fallback", name)
	}
	if got := joinFile(header(st.Generation, st.Updated), body); !bytes.Equal(got, append(full, '\n')) {
		t.Fatalf("%s: the fast encoder wrote\n%s\njson.Marshal wrote\n%s", name, got, full)
	}
	// Decoding, of the compact form and of an indented one.
	var indented bytes.Buffer
	json.Indent(&indented, full, " ", "\t")
	for _, in := range [][]byte{full, indented.Bytes()} {
		want := new(State)
		if err := json.Unmarshal(in, want); err != nil {
			t.Fatalf("%s: json.Unmarshal: %v", name, err)
		}
		got, err := decodeFast(string(in))
		if err != nil {
			t.Fatalf("%s: the fast decoder gave up on json.Marshal's output: %v\n%s", name, err, in)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: the fast decoder read\n%#v\nencoding/json read\n%#v\nfrom\n%s", name, got, want, in)
		}
	}
}

var hostileStrings = []string{
	"", "a", "api", "t_abc12345", "/home/me/src/api", "line one\nline two\r\n\ttabbed",
	`quote " backslash \ slash /`, "<script>&amp;</script>", "\x00\x01\x1f\x7f", "\b\f",
	"héllo wörld ✓ 日本語 🎉", "\u2028\u2029", "bad utf8 \xff\xfe end", "\xed\xa0\x80", // a UTF-8 encoded surrogate
	"\ufffd", "trailing \xe2\x82", strings.Repeat("long ", 30),
}

var hostileRaw = []string{
	`{}`, `[]`, `null`, `true`, `0`, `-1.5e+10`, `"s"`,
	`{"timeout":"10m","approve":["go test","go vet"],"notify":true,"n":3}`,
	`{ "spaced" : [ 1 , 2 ] ,"html":"<a&b>"}`, "{\"ls\":\"\u2028\"}", `{"esc":"\u00e9\n\"q\""}`,
	`[{"a":{"b":[null,false,1e3]}}]`,
}

// fillRandom sets v, and everything in it, to random values.
func fillRandom(rng *rand.Rand, v reflect.Value, depth int) {
	switch v.Type() {
	case reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(randomTime(rng)))
		return
	case reflect.TypeFor[json.RawMessage]():
		switch rng.IntN(4) {
		case 0:
			v.SetZero()
		case 1:
			v.Set(reflect.ValueOf(json.RawMessage{}))
		default:
			v.Set(reflect.ValueOf(json.RawMessage(hostileRaw[rng.IntN(len(hostileRaw))])))
		}
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(hostileStrings[rng.IntN(len(hostileStrings))])
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 0)
	case reflect.Int, reflect.Int64:
		v.SetInt([]int64{0, 0, 1, -1, 42, 1 << 40, math.MaxInt64, math.MinInt64, rng.Int64()}[rng.IntN(9)])
	case reflect.Uint64:
		v.SetUint([]uint64{0, 1, 12800, math.MaxUint64, rng.Uint64()}[rng.IntN(5)])
	case reflect.Pointer:
		if rng.IntN(3) == 0 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		fillRandom(rng, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() && rng.IntN(5) != 0 {
				fillRandom(rng, v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		switch n := rng.IntN(5); n {
		case 0:
			v.SetZero()
		default:
			s := reflect.MakeSlice(v.Type(), n-1, n-1)
			for i := range n - 1 {
				fillRandom(rng, s.Index(i), depth+1)
			}
			v.Set(s)
		}
	case reflect.Map:
		switch n := rng.IntN(5); n {
		case 0:
			v.SetZero()
		default:
			m := reflect.MakeMap(v.Type())
			for range n - 1 {
				k := reflect.New(v.Type().Key()).Elem()
				fillRandom(rng, k, depth+1)
				e := reflect.New(v.Type().Elem()).Elem()
				fillRandom(rng, e, depth+1)
				m.SetMapIndex(k, e)
			}
			v.Set(m)
		}
	default:
		panic(fmt.Sprintf("fillRandom: no rule for %s: add one, so the differential test covers the new field", v.Type()))
	}
}

func randomTime(rng *rand.Rand) time.Time {
	base := time.Date(2000+rng.IntN(60), time.Month(1+rng.IntN(12)), 1+rng.IntN(31), rng.IntN(24), rng.IntN(60), rng.IntN(60), 0, time.UTC)
	switch rng.IntN(8) {
	case 0:
		return time.Time{}
	case 1:
		return base
	case 2:
		return base.Add(time.Duration(rng.IntN(1e9))) // nanoseconds, trailing zeros trimmed
	case 3:
		return base.Add(time.Duration(rng.IntN(1000)) * time.Millisecond)
	case 4:
		return base.In(time.FixedZone("", (rng.IntN(48)-24)*1800))
	case 5:
		return base.Local()
	case 6:
		return time.Date([]int{0, 1, 9999}[rng.IntN(3)], 2, 28, 23, 59, 59, 999999999, time.UTC)
	}
	return time.Now() // monotonic reading, local zone
}

// FuzzDecode holds the fast decoder to encoding/json on any input: where
// the fast path answers, encoding/json must succeed with the same State;
// where encoding/json fails, the fast path must give up. Plain go test runs
// the seeds (and their mutations below); go test -fuzz FuzzDecode explores.
func FuzzDecode(f *testing.F) {
	rng := rand.New(rand.NewPCG(2, 3))
	for range 20 {
		st := new(State)
		fillRandom(rng, reflect.ValueOf(st).Elem(), 0)
		b, err := json.Marshal(st)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		`{"version":1,"generation":2,"projects":{},"tasks":{}}`,
		`{"version":1,"Projects":{}}`,                         // key in another case
		`{"version":1,"version":2}`,                           // repeated key
		`{"version":1,"extra":[1,2,{"a":null}],"tasks":null}`, // unknown key
		`{"version":1.0}`, `{"version":"1"}`, `{"version":01}`, `{"version":-0}`, `{"version":1e2}`,
		`{"version":9223372036854775808}`, `{"generation":-1}`, `{"generation":18446744073709551616}`,
		`{"projects":{"a":null,"b":{"name":"b","added":"2024-01-01T00:00:00+01:00"}}}`,
		`{"tasks":{"t":{"history":null,"turns":[],"exit_code":null,"settings":null,"tmux":{}}}}`,
		`{"tasks":{"t":{"created":"2024-02-30T00:00:00Z"}}}`, `{"tasks":{"t":{"created":"2024-02-29T24:00:00Z"}}}`,
		`{"tasks":{"t":{"created":"2024-02-29T23:00:00.1234567891Z"}}}`, `{"tasks":{"t":{"created":null}}}`,
		`{"tasks":{"t":{"created":"2024-02-29T23:00:00\u005a"}}}`, `{"tasks":{"t":{"text":"\ud83d\ude00 \ud800 \udc00x \u00"}}}`,
		`{"tasks":{"t":{"text":"tab	raw"}}}`, "{\"tasks\":{\"t\":{\"text\":\"abcdefghijklmnop\x01qrstuvwxyz0123456789\"}}}",
		"{\"tasks\":{\"t\":{\"text\":\"abcdefghijklmnop\x7fqrstuvw\xc3\xa9xyz0123456789\\\"}}}", `{"tasks":{"t":{"text":"\'"}}}`, `{"tasks":{"t":{"settings":{"a":[1,2,}}}}`,
		`{"tasks":{"t":{"settings": {"a" : 1} }}}`, `{"tasks":{"t":{"settings":nul}}}`, `{"tasks":{"t":{"settings":-}}}`,
		`{"version":1} x`, `{"version":1}` + "\n\t ", ` {"version":1`, ``, `[]`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkDecode(t, in)
		// A few mutations of each seed, so plain go test explores too.
		r := rand.New(rand.NewPCG(uint64(len(in)), 7))
		for range 20 {
			m := bytes.Clone(in)
			if len(m) == 0 {
				break
			}
			for range 1 + r.IntN(3) {
				m[r.IntN(len(m))] = mutations[r.IntN(len(mutations))]
			}
			checkDecode(t, m)
		}
	})
}

const mutations = `{}[]":,\ nu0-.e"tx` + "\x00\xff"

func checkDecode(t *testing.T, in []byte) {
	t.Helper()
	want := new(State)
	jerr := json.Unmarshal(in, want)
	got, ferr := decodeFast(string(in))
	if ferr != nil {
		if !errors.Is(ferr, errFallback) || strings.Contains(ferr.Error(), "runtime error") {
			t.Fatalf("decodeFast(%q): %v", in, ferr)
		}
		return
	}
	if jerr != nil {
		t.Fatalf("decodeFast accepted %q, which encoding/json refuses: %v", in, jerr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeFast(%q) =\n%#v\nencoding/json:\n%#v", in, got, want)
	}
}

// The fast decoder answers for the files runner writes, and what it does not
// understand reaches encoding/json through parse.
func TestParseFallsBack(t *testing.T) {
	s := openTemp(t)
	mustUpdate(t, s, func(st *State) error {
		fill(st, 20, false)
		st.Projects["api"] = &Project{Name: "api", Dir: "/src/api", Added: time.Now()}
		return nil
	})
	raw := readFile(t, s.Path())
	if _, err := decodeFast(string(raw)); err != nil {
		t.Fatalf("the fast decoder gave up on a file Update wrote: %v", err)
	}
	for _, in := range []string{
		`{"version":1,"generation":3,"Projects":{"a":{"name":"a","dir":"/a"}},"tasks":{},"future":{"x":1}}`,
		`{"version":1,"generation":3,"projects":{},"projects":{"a":{"name":"a","dir":"/a"}},"tasks":{}}`,
		`{"version":1,"generation":3,"projects":{"a":{"name":"a","dir":"/a","DIR":"/b"}},"tasks":{}}`,
	} {
		if _, err := decodeFast(in); !errors.Is(err, errFallback) {
			t.Fatalf("decodeFast(%s) = %v, want errFallback", in, err)
		}
		st, err := parse("x", in)
		want := new(State)
		if jerr := json.Unmarshal([]byte(in), want); err != nil || jerr != nil {
			t.Fatalf("parse(%s) = %v; json: %v", in, err, jerr)
		}
		want.normalize()
		if !reflect.DeepEqual(st, want) {
			t.Fatalf("parse(%s) = %+v, want %+v", in, st, want)
		}
	}
}

// The encoder fails where json.Marshal fails, and encode reports it.
func TestEncodeErrors(t *testing.T) {
	for name, task := range map[string]*Task{
		"time past year 9999": {ID: "t_1", Created: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		"invalid settings":    {ID: "t_1", Settings: json.RawMessage(`{"a":`)},
	} {
		st := New()
		st.Tasks[task.ID] = task
		if _, err := json.Marshal(st); err == nil {
			t.Fatalf("%s: json.Marshal did not fail", name)
		}
		if _, err := encodeFast(nil, st); err == nil {
			t.Errorf("%s: encodeFast did not fail", name)
		}
		if _, _, err := encode(st, 0); err == nil || !strings.Contains(err.Error(), "encode state") {
			t.Errorf("%s: encode = %v", name, err)
		}
	}
}

// BenchmarkCodec compares the fast codec with encoding/json on the same
// 10 000 full task records, in the same run.
func BenchmarkCodec(b *testing.B) {
	st := New()
	fill(st, 10000, false)
	raw, err := json.Marshal(st)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("decode/json", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			if err := json.Unmarshal(raw, new(State)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode/fast", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		s := string(raw)
		for b.Loop() {
			if _, err := decodeFast(s); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode/json", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			if _, err := json.Marshal(st); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode/fast", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			if _, err := encodeFast(make([]byte, 0, len(raw)), st); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// parseUTC returns what time.Time.UnmarshalJSON returns, for any instant
// between the years 0 and 9999 at any precision, and declines what it does
// not handle.
func TestParseUTC(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, uint64(time.Now().UnixNano())))
	lo := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	hi := time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Unix()
	for i := range 100000 {
		sec := lo + rng.Int64N(hi-lo+1)
		if i%4 == 0 { // dense around today and the leap days
			sec = time.Date(1960+rng.IntN(200), 2, 27+rng.IntN(4), 0, 0, rng.IntN(86400), 0, time.UTC).Unix()
		}
		nsec := []int64{0, rng.Int64N(1e9), rng.Int64N(1e3) * 1e6, 999999999, 1}[rng.IntN(5)]
		tm := time.Unix(sec, nsec).UTC()
		text, _ := tm.AppendText([]byte{'"'})
		text = append(text, '"')
		var want time.Time
		if err := want.UnmarshalJSON(text); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		got, n, ok := parseUTC(string(text[1:]))
		if !ok || n != len(text)-2 || !reflect.DeepEqual(got, want) {
			t.Fatalf("parseUTC(%s) = %#v, %d, %v; UnmarshalJSON: %#v", text, got, n, ok, want)
		}
	}
	for _, s := range []string{
		`2023-02-29T00:00:00Z"`, `2024-02-30T00:00:00Z"`, `2024-13-01T00:00:00Z"`, `2024-01-01T24:00:00Z"`,
		`2024-01-01T00:60:00Z"`, `2024-01-01T00:00:60Z"`, `2024-01-01T00:00:00.Z"`, `2024-01-01T00:00:00.1234567891Z"`,
		`2024-01-01T00:00:00+01:00"`, `2024-01-01T00:00:00Z`, `2024-01-01 00:00:00Z"`, `+024-01-01T00:00:00Z"`, `2024-01-01T00:00:00z"`,
	} {
		if _, _, ok := parseUTC(s); ok {
			t.Errorf("parseUTC(%s) accepted it", s)
		}
	}
}

// boolField is ready for the first bool in the state file; it behaves as
// encoding/json does.
func TestBoolField(t *testing.T) {
	type flags struct {
		A bool `json:"a"`
		B bool `json:"b,omitempty"`
	}
	table := []field[flags]{
		boolField("a", 0, func(f *flags) *bool { return &f.A }),
		boolField("b", omitEmpty, func(f *flags) *bool { return &f.B }),
	}
	for _, v := range []flags{{}, {A: true}, {B: true}, {true, true}} {
		want, _ := json.Marshal(v)
		if got := encodeObject(nil, &v, table, 0); !bytes.Equal(got, want) {
			t.Errorf("encode %+v = %s, want %s", v, got, want)
		}
		var got flags
		decodeObject(&decoder{s: string(want)}, &got, table)
		if got != v {
			t.Errorf("decode %s = %+v", want, got)
		}
	}
	for _, in := range []string{`{"a":tru}`, `{"a":1}`, `{"a":null}`} {
		var got flags
		if _, ok := tryDecode(func() { decodeObject(&decoder{s: in}, &got, table) }); ok {
			t.Errorf("decoded %s", in)
		}
	}
}

// tryDecode runs fn and reports whether it finished without the decoder
// giving up.
func tryDecode(fn func()) (r any, ok bool) {
	defer func() {
		if r = recover(); r != nil {
			if _, fb := r.(fallback); !fb {
				panic(r)
			}
			ok = false
		}
	}()
	fn()
	return nil, true
}
