package state

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

// fillAll sets every field reachable from v to a value that is not its
// zero: pointers to new values, slices and maps of two elements each.
// depth bounds recursion.
func fillAll(v reflect.Value, n *int, depth int) {
	*n++
	if depth > 8 {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillAll(v.Elem(), n, depth+1)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Unix(int64(1000+*n), int64(*n)).UTC()))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillAll(v.Field(i), n, depth+1)
			}
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fillAll(s.Index(i), n, depth+1)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for range 2 {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fillAll(k, n, depth+1)
			fillAll(e, n, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", *n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(*n) + 0.5)
	}
}

// shared reports the first map, slice or pointer a and b (of one type)
// share, by path; "" for none.
func shared(a, b reflect.Value, path string) string {
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return ""
		}
		if a.Pointer() == b.Pointer() {
			return path
		}
		return shared(a.Elem(), b.Elem(), "*"+path)
	case reflect.Struct:
		if a.Type() == reflect.TypeOf(time.Time{}) {
			return "" // a value: its location is never changed
		}
		for i := range a.NumField() {
			if a.Type().Field(i).IsExported() {
				if p := shared(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); p != "" {
					return p
				}
			}
		}
	case reflect.Slice:
		if a.Len() > 0 && b.Len() > 0 && a.Pointer() == b.Pointer() {
			return path
		}
		for i := range min(a.Len(), b.Len()) {
			if p := shared(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	case reflect.Map:
		if a.Len() > 0 && a.Pointer() == b.Pointer() {
			return path
		}
		for _, k := range a.MapKeys() {
			if p := shared(a.MapIndex(k), b.MapIndex(k), fmt.Sprintf("%s[%v]", path, k)); p != "" {
				return p
			}
		}
	}
	return ""
}

// TestIndexCloneDeep: indexFile.clone copies every field, a field added
// later included (fillAll reaches it), and shares no map, slice or
// pointer with the original: the decoded index a load reuses is never
// changed through a State made from an earlier copy.
func TestIndexCloneDeep(t *testing.T) {
	var ix indexFile
	n := 0
	fillAll(reflect.ValueOf(&ix).Elem(), &n, 0)
	c := ix.clone()
	if !reflect.DeepEqual(&ix, c) {
		t.Fatalf("the clone differs:\n%+v\n%+v", ix, *c)
	}
	if p := shared(reflect.ValueOf(&ix).Elem(), reflect.ValueOf(c).Elem(), "indexFile"); p != "" {
		t.Errorf("the clone shares %s with the original", p)
	}
	for id, e := range ix.Tasks {
		if len(e.Tmux) == 0 || e.Spend == nil || e.Started == nil {
			t.Fatalf("fillAll left task %s's fields empty: %+v", id, e)
		}
	}
}

// TestLoadReusesDecodedIndex: a load of an index file decoded before
// (the same bytes) copies it rather than decoding it again; what a load
// returns can be changed without reaching the next load's; a write, by
// any process, makes the next load decode anew; a write's own load keeps
// nothing.
func TestLoadReusesDecodedIndex(t *testing.T) {
	s, ids := lazyFixture(t, 5)
	mustUpdate(t, s, func(st *State) error {
		st.Projects["p"] = &Project{Name: "p", Dir: "/d", Added: clock.Now().UTC()}
		return nil
	})
	first, _, err := s.loadIndex()
	if err != nil {
		t.Fatal(err)
	}
	before := indexDecodes.Load()
	second, _, err := s.loadIndex()
	if err != nil {
		t.Fatal(err)
	}
	if d := indexDecodes.Load() - before; d != 0 {
		t.Errorf("the same bytes were decoded %d more times", d)
	}
	if !reflect.DeepEqual(first.Projects, second.Projects) || len(second.Tasks) != len(ids) {
		t.Fatalf("the second load differs: %+v, %d tasks", second.Projects, len(second.Tasks))
	}
	// Changes to one load's State reach no later load.
	second.Projects["p"].Dir = "/changed"
	second.Projects["q"] = &Project{Name: "q"}
	second.Tasks[ids[0]].After = append(second.Tasks[ids[0]].After, "t_x")
	third, _, err := s.loadIndex()
	if err != nil {
		t.Fatal(err)
	}
	if third.Projects["p"].Dir != "/d" || third.Projects["q"] != nil || len(third.Tasks[ids[0]].After) != 0 {
		t.Errorf("a change to one load's state reached the next: %+v, after %v", third.Projects, third.Tasks[ids[0]].After)
	}
	// Another process's write (another Store on the directory).
	other, err := Open(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, other, func(st *State) error {
		st.Projects["p"].Dir = "/moved"
		return nil
	})
	before = indexDecodes.Load()
	fourth, _, err := s.loadIndex()
	if err != nil {
		t.Fatal(err)
	}
	if indexDecodes.Load() == before || fourth.Projects["p"].Dir != "/moved" {
		t.Errorf("a load after another's write: %d decodes, project %+v; want one, and the write's", indexDecodes.Load()-before, fourth.Projects["p"])
	}
	// A load for a write (under the lock: its write replaces the file)
	// keeps nothing: the next load of those bytes decodes them.
	mustUpdate(t, other, func(st *State) error {
		st.Projects["p"].Dir = "/again"
		return nil
	})
	if _, _, err := s.loadAs(true, false); err != nil {
		t.Fatal(err)
	}
	before = indexDecodes.Load()
	if _, _, err := s.loadIndex(); err != nil {
		t.Fatal(err)
	}
	if d := indexDecodes.Load() - before; d != 1 {
		t.Errorf("a load after a write's load of the same bytes decoded %d times, want 1 (nothing kept)", d)
	}
}

// BenchmarkLoadIndex loads an index of 300 tasks: "same" as it was
// loaded last (the decoded index copied), "decode" with the decoded one
// forgotten first (what every load did before).
func BenchmarkLoadIndex(b *testing.B) {
	s := openTemp(b)
	now := clock.Now().UTC()
	mustUpdate(b, s, func(st *State) error {
		for i := range 300 {
			id := fmt.Sprintf("t_load%06d", i)
			tk := &Task{ID: id, Project: "p", Dir: "/d", Agent: "sim", Created: now, Text: "a task",
				Ports: PortRange{First: 9000 + 10*i, Count: 10}}
			if err := tk.SetStatus(StatusRunning, now, "started"); err != nil {
				return err
			}
			st.Tasks[id] = tk
		}
		return nil
	})
	for _, forget := range []bool{false, true} {
		name := "same"
		if forget {
			name = "decode"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if forget {
					lastIndex.mu.Lock()
					lastIndex.ix = nil
					lastIndex.mu.Unlock()
				}
				if _, _, err := s.loadIndex(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
