package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
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
	// This process's write (another Store on the directory): the next
	// load copies the index it wrote, made what a decode gives
	// (verifyDecoded checks it), and decodes nothing.
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
	if indexDecodes.Load() != before || fourth.Projects["p"].Dir != "/moved" {
		t.Errorf("a load after this process's write: %d decodes, project %+v; want none, and the write's", indexDecodes.Load()-before, fourth.Projects["p"])
	}
	// The bytes are marked as this process's own (ReadTask trusts them),
	// and stay so when the kept index is dropped and they are decoded.
	ours := func() bool { return lastIndex.isOurs(s.Dir(), readFileT(t, s.Path())) }
	if !ours() {
		t.Error("this process's own write is not marked as ours")
	}
	lastIndex.forget()
	if _, _, err := s.loadIndex(); err != nil {
		t.Fatal(err)
	}
	if !ours() {
		t.Error("this process's own write, decoded again, is no longer marked as ours")
	}
	// Another process's write: its bytes are decoded.
	other2 := func(from, to string) {
		raw := readFileT(t, s.Path())
		changed := bytes.Replace(raw, []byte(from), []byte(to), 1)
		if bytes.Equal(changed, raw) {
			t.Fatalf("no %s in %s", from, raw)
		}
		if err := os.WriteFile(s.Path(), changed, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	other2(`"/moved"`, `"/mover"`)
	before = indexDecodes.Load()
	fifth, _, err := s.loadIndex()
	if err != nil {
		t.Fatal(err)
	}
	if indexDecodes.Load()-before != 1 || fifth.Projects["p"].Dir != "/mover" {
		t.Errorf("a load after another process's write: %d decodes, project %+v; want one, and the write's", indexDecodes.Load()-before, fifth.Projects["p"])
	}
	if ours() {
		t.Error("another process's bytes are marked as ours")
	}
	// A load for a write (under the lock: its write replaces the file)
	// keeps nothing: the next load of those bytes decodes them.
	other2(`"/mover"`, `"/again"`)
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
					lastIndex.forget()
				}
				if _, _, err := s.loadIndex(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestWrittenIndexAsDecoded: the index a write keeps for the next load is
// what a decode of the bytes it wrote gives, value for value, for the
// values where a decode differs from what was marshalled: invalid UTF-8
// (each bad byte a U+FFFD), times in other zones and with a monotonic
// reading, empty slices that omitempty leaves out, a title cut inside a
// character, hosts, archived tasks. verifyDecoded (set for state's tests)
// compares each with a decode; this test makes the values and checks the
// load copied, not decoded. A map key that a write changes (invalid
// UTF-8) is not followed: that load decodes.
func TestWrittenIndexAsDecoded(t *testing.T) {
	s := openTemp(t)
	s.ArchiveAfter = 1
	zone := time.FixedZone("UTC+1", 3600)
	bad := "caf\xc3 \xff\xfe end"
	mustUpdate(t, s, func(st *State) error {
		st.Projects["far"] = &Project{Name: "bad " + bad, Dir: "/d", Host: "box", Added: clock.Now().In(zone)}
		st.Projects["ok"] = &Project{Name: "ok", Dir: "/e", Added: clock.Now()} // a monotonic reading
		for i, text := range []string{strings.Repeat("é", 40) + "\nsecond", bad, ""} {
			id := fmt.Sprintf("t_rt%06d", i)
			x := finishedTask(id, clock.Now().Add(-time.Duration(i)*time.Minute))
			x.Text, x.After, x.Handling = text, []string{}, []string{}
			x.Tmux.Host = "box"
			st.Tasks[id] = x
		}
		st.AddMessage(&Message{ID: "m_rt000001", From: SenderUser, To: "t_rt000000", Type: "info", Text: bad, Status: MessagePending, Created: clock.Now().In(zone)})
		return nil
	})
	mustUpdate(t, s, func(st *State) error { st.retired, st.applied = []string{}, []string{}; return nil })
	kept := func() *indexFile {
		lastIndex.mu.Lock()
		defer lastIndex.mu.Unlock()
		return lastIndex.ix
	}
	before := indexDecodes.Load()
	if _, _, err := s.loadIndex(); err != nil {
		t.Fatal(err)
	}
	if d := indexDecodes.Load() - before; d != 0 {
		t.Errorf("the load after this process's write decoded %d times, want a copy", d)
	}
	var want indexFile
	if err := json.Unmarshal(readFileT(t, s.Path()), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(kept(), &want) {
		t.Fatalf("the kept index differs from a decode:\n%+v\n%+v", kept(), &want)
	}

	mustUpdate(t, s, func(st *State) error {
		st.Projects["p\xffq"] = &Project{Name: "p", Dir: "/f"}
		return nil
	})
	before = indexDecodes.Load()
	ix, _, err := s.loadIndex()
	if err != nil {
		t.Fatal(err)
	}
	if d := indexDecodes.Load() - before; d != 1 || ix.Projects["p\uFFFDq"] == nil {
		t.Errorf("a key the write changed: %d decodes, projects %v; want the bytes decoded", d, ix.Projects)
	}
}
