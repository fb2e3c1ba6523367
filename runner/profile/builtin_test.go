package profile

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"regexp"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

const builtinsGolden = "testdata/builtins.golden.json"

// TestBuiltinsGolden: the built-in profiles, every field after Compile,
// are those of testdata/builtins.golden.json. The file was first written
// from the Go literals the agent files replaced (so the files were proven
// equal to them field by field); a change to an agent file shows here, and
// `go test -run TestBuiltinsGolden -update` accepts it.
func TestBuiltinsGolden(t *testing.T) {
	got, err := json.MarshalIndent(Builtins(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile(builtinsGolden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(builtinsGolden)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(got, want) {
		return
	}
	var g, w []map[string]any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if len(g) != len(w) {
		t.Fatalf("%d built-in profiles, the golden file has %d", len(g), len(w))
	}
	for i := range g {
		for k := range mergeKeys(g[i], w[i]) {
			if !reflect.DeepEqual(g[i][k], w[i][k]) {
				t.Errorf("%s.%s:\n  got  %v\n  want %v", g[i]["name"], k, g[i][k], w[i][k])
			}
		}
	}
	t.Log("run go test -run TestBuiltinsGolden -update to accept the change")
}

func mergeKeys(a, b map[string]any) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// TestBuiltinsCompile: every pattern of every built-in agent file
// compiles (Builtins leaves that to their first use).
func TestBuiltinsCompile(t *testing.T) {
	for _, p := range Builtins() {
		q := p.clone()
		q.re = nil
		if err := q.Compile(); err != nil {
			t.Errorf("agents/%s.toml: %v", p.Name, err)
		}
	}
}

// TestBuiltinOrigins: every pattern of every built-in profile knows the
// line of its file it comes from, and that line holds it.
func TestBuiltinOrigins(t *testing.T) {
	for _, p := range Builtins() {
		data, err := BuiltinFile(p.Name)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.Split(data, []byte("\n"))
		for _, r := range p.rules() {
			o := p.Origin(r.key)
			if !o.Builtin || o.File != "agents/"+p.Name+".toml" || o.Line < 1 || o.Line > len(lines) {
				t.Errorf("%s %s: origin %+v", p.Name, r.key, o)
				continue
			}
			lit, _ := json.Marshal(r.re.String())
			l := string(lines[o.Line-1])
			if !bytes.Contains([]byte(l), []byte(r.re.String())) && !regexp.MustCompile(regexp.QuoteMeta(string(lit[1:len(lit)-1]))).MatchString(l) {
				t.Errorf("%s %s: line %d %q does not hold %q", p.Name, r.key, o.Line, l, r.re.String())
			}
		}
	}
}

// BenchmarkBuiltins measures what every runner command pays for its
// profiles. Before issue 51 the agent files were parsed and checked once
// per process ("parse-files", what loadBuiltins still does for the tests
// and the generator) and each Builtins call copied the result; now
// Builtins makes them from builtin_gen.go's literals, every call
// ("generated"; "generated-one": BuiltinProfile). A profile's patterns
// are compiled once per process at their first use, as before
// ("compile-all": every pattern of every built-in profile).
func BenchmarkBuiltins(b *testing.B) {
	ps := Builtins()
	b.Run("compile-all", func(b *testing.B) {
		for b.Loop() {
			for _, p := range ps {
				q := p.clone()
				q.re = nil
				if err := q.Compile(); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("parse-files", func(b *testing.B) {
		for b.Loop() {
			if _, err := loadBuiltins(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("generated", func(b *testing.B) {
		for b.Loop() {
			Builtins()
		}
	})
	b.Run("generated-one", func(b *testing.B) {
		for b.Loop() {
			if _, err := BuiltinProfile("claude"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
