package procinfo

import (
	"encoding/binary"
	"os"
	"slices"
	"testing"
)

func TestParseStat(t *testing.T) {
	rest := " 4 5 6 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 98765 1000 200"
	for _, tc := range []struct {
		name, line string
		ok         bool
		want       Proc
	}{
		{"plain", "123 (sleep) S 1" + rest, true, Proc{PID: 123, PPID: 1, PGID: 4, SID: 5, State: 'S', Comm: "sleep", Start: 98765, UID: 7}},
		{"comm with spaces and parentheses", "77 (tmux: server) (x)) R 2" + rest, true, Proc{PID: 77, PPID: 2, PGID: 4, SID: 5, State: 'R', Comm: "tmux: server) (x)", Start: 98765, UID: 7}},
		{"zombie", "9 (sh) Z 8" + rest, true, Proc{PID: 9, PPID: 8, PGID: 4, SID: 5, State: 'Z', Comm: "sh", Start: 98765, UID: 7}},
		{"too few fields", "9 (sh) S 8 4 5", false, Proc{}},
		{"no parentheses", "9 sh S 8" + rest, false, Proc{}},
		{"no pid", "(sh) S 8" + rest, false, Proc{}},
		{"bad start time", "9 (sh) S 8 4 5 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 x 1000 200", false, Proc{}},
		{"empty", "", false, Proc{}},
	} {
		got, ok := parseStat([]byte(tc.line), 7)
		if ok != tc.ok || got != tc.want {
			t.Errorf("%s: parseStat = %+v, %v; want %+v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestStatExit(t *testing.T) {
	fields := func(state, ws string) string {
		s := "9 (a b) " + state
		for i := 1; i < 49; i++ {
			s += " 0"
		}
		return s + " " + ws
	}
	for _, tc := range []struct {
		name, line    string
		status        int
		known, zombie bool
	}{
		{"exit 3", fields("Z", "768"), 3, true, true},
		{"killed by signal 9", fields("Z", "9"), 137, true, true},
		{"exit 0", fields("Z", "0"), 0, true, true},
		{"running", fields("S", "0"), 0, false, false},
		{"old kernel: no exit field", "9 (sh) Z 1 2 3", 0, false, true},
		{"garbage", "9 sh", 0, false, false},
	} {
		status, known, zombie := statExit([]byte(tc.line))
		if status != tc.status || known != tc.known || zombie != tc.zombie {
			t.Errorf("%s: statExit = %d, %v, %v; want %d, %v, %v", tc.name, status, known, zombie, tc.status, tc.known, tc.zombie)
		}
	}
}

func TestLoadavg(t *testing.T) {
	if v, ok := parseLoadavg("37.50 20.1 9.0 3/900 1234\n"); !ok || v != 37.5 {
		t.Errorf("parseLoadavg = %v, %v", v, ok)
	}
	if _, ok := parseLoadavg(""); ok {
		t.Error("parseLoadavg of nothing is ok")
	}
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		b := make([]byte, 24)
		order.PutUint32(b[0:], 3*2048+1024) // 3.5 at fscale 2048
		order.PutUint32(b[4:], 2048)
		order.PutUint32(b[8:], 1024)
		order.PutUint64(b[16:], 2048)
		if v, ok := darwinLoadavg(b, order); !ok || v != 3.5 {
			t.Errorf("darwinLoadavg (%v) = %v, %v; want 3.5", order, v, ok)
		}
	}
	if _, ok := darwinLoadavg(make([]byte, 24), binary.LittleEndian); ok {
		t.Error("darwinLoadavg with fscale 0 is ok")
	}
	if _, ok := darwinLoadavg(make([]byte, 12), binary.LittleEndian); ok {
		t.Error("darwinLoadavg of a short record is ok")
	}
}

func TestDarwinProc(t *testing.T) {
	comm := make([]byte, 17)
	copy(comm, "tmux")
	p := darwinProc(42, 1, 40, 5, comm, 1_700_000_000, 123456, 501)
	want := Proc{PID: 42, PPID: 1, PGID: 40, State: 'Z', Comm: "tmux", Start: 1_700_000_000_123_456, UID: 501}
	if p != want {
		t.Errorf("darwinProc = %+v, want %+v", p, want)
	}
	full := []byte("0123456789abcdefg") // 17 bytes, no NUL
	if p := darwinProc(1, 0, 1, 2, full, 0, 0, 0); p.Comm != string(full) || p.State != 'R' {
		t.Errorf("darwinProc of a full name: %+v", p)
	}
	for stat, want := range map[int8]byte{1: 'I', 2: 'R', 3: 'S', 4: 'T', 5: 'Z', 9: '?'} {
		if got := darwinState(stat); got != want {
			t.Errorf("darwinState(%d) = %c, want %c", stat, got, want)
		}
	}
}

func TestParseProcArgs2(t *testing.T) {
	rec := func(order binary.ByteOrder, argc int32, rest string) []byte {
		b := make([]byte, 4)
		order.PutUint32(b, uint32(argc))
		return append(b, rest...)
	}
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		b := rec(order, 2, "/usr/local/bin/claude\x00\x00\x00\x00node\x00--flag\x00RUNNER_TASK_ID=t_1\x00HOME=/Users/a\x00\x00\x00junk")
		exe, argv, env, ok := parseProcArgs2(b, order)
		if !ok || exe != "/usr/local/bin/claude" || !slices.Equal(argv, []string{"node", "--flag"}) ||
			!slices.Equal(env, []string{"RUNNER_TASK_ID=t_1", "HOME=/Users/a"}) {
			t.Errorf("parseProcArgs2 = %q %q %q %v", exe, argv, env, ok)
		}
	}
	for name, b := range map[string][]byte{
		"short":                {1, 0},
		"no path end":          rec(binary.LittleEndian, 1, "/bin/sh"),
		"fewer args than argc": rec(binary.LittleEndian, 3, "/bin/sh\x00sh\x00"),
		"negative argc":        rec(binary.LittleEndian, -1, "/bin/sh\x00"),
	} {
		if _, _, _, ok := parseProcArgs2(b, binary.LittleEndian); ok {
			t.Errorf("%s: parseProcArgs2 ok", name)
		}
	}
	// No environment at all, the record ending after the arguments.
	if _, argv, env, ok := parseProcArgs2(rec(binary.LittleEndian, 1, "/bin/sh\x00sh"), binary.LittleEndian); !ok || len(argv) != 1 || env != nil {
		t.Errorf("a record without environment: %q %q %v", argv, env, ok)
	}
}

func writeFile(name, s string) error { return os.WriteFile(name, []byte(s), 0o600) }
