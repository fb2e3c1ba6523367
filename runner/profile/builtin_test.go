package profile

import (
	"reflect"
	"testing"
)

// TestBuiltinFilesEqualGoProfiles: every embedded agent file gives,
// field by field, the profile the Go literal of profiles_builtin.go gives.
func TestBuiltinFilesEqualGoProfiles(t *testing.T) {
	fromFiles, err := loadBuiltins()
	if err != nil {
		t.Fatal(err)
	}
	fromGo := Builtins()
	if len(fromFiles) != len(fromGo) {
		t.Fatalf("%d profiles from files, %d from Go", len(fromFiles), len(fromGo))
	}
	for i, g := range fromGo {
		f := fromFiles[i]
		if f.Name != g.Name {
			t.Errorf("profile %d: %q from files, %q from Go", i, f.Name, g.Name)
			continue
		}
		gv, fv := reflect.ValueOf(g).Elem(), reflect.ValueOf(f).Elem()
		for j := range gv.NumField() {
			sf := gv.Type().Field(j)
			if !sf.IsExported() {
				continue
			}
			if !reflect.DeepEqual(gv.Field(j).Interface(), fv.Field(j).Interface()) {
				t.Errorf("%s.%s:\n  Go:   %#v\n  file: %#v", g.Name, sf.Name, gv.Field(j).Interface(), fv.Field(j).Interface())
			}
		}
		if f.Origin("ready[0]").Line == 0 || !f.Origin("ready[0]").Builtin {
			t.Errorf("%s: ready[0] has no origin: %+v", f.Name, f.Origin("ready[0]"))
		}
	}
}

// BenchmarkBuiltins measures what every runner command pays for its
// profiles: the Go literals compiled (the baseline, until the files
// replace them), the embedded files parsed and compiled (once per
// process), and the copies handed out after that.
func BenchmarkBuiltins(b *testing.B) {
	b.Run("go-literals", func(b *testing.B) {
		for b.Loop() {
			Builtins()
		}
	})
	b.Run("files-parse-compile", func(b *testing.B) {
		for b.Loop() {
			if _, err := loadBuiltins(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("files-copies", func(b *testing.B) {
		ps, err := builtinSet()
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			for _, p := range ps {
				p.clone()
			}
		}
	})
}
