package doctor

import (
	"strings"
	"testing"
)

func TestSemverRange(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rng  string
		yes  []string
		no   []string
		fail bool
	}{
		{rng: ">=22", yes: []string{"22.0.0", "22.12.0", "24.1.0"}, no: []string{"20.19.2", "21.99.99"}},
		{rng: ">=22.0.0", yes: []string{"22.0.0", "23.0.0"}, no: []string{"20.20.2"}},
		{rng: ">=18.0.0", yes: []string{"18.0.0", "20.20.2"}, no: []string{"17.9.1"}},
		{rng: ">=20.6.0", yes: []string{"20.6.0", "22.1.0"}, no: []string{"20.5.9", "18.20.0"}},
		{rng: ">= 20", yes: []string{"20.0.0", "26.0.0"}, no: []string{"19.9.9"}},
		{rng: ">=v20", yes: []string{"20.0.0"}, no: []string{"19.0.0"}},
		{rng: "^20.10 || >=22", yes: []string{"20.10.0", "20.19.2", "22.0.0", "23.1.0"}, no: []string{"20.9.9", "21.0.0", "18.20.0"}},
		{rng: "^18.17.0 || ^20.3.0 || >=21.0.0", yes: []string{"18.17.0", "20.3.0", "21.0.0"}, no: []string{"18.16.9", "19.0.0", "20.2.0"}},
		{rng: "20.x", yes: []string{"20.0.0", "20.99.1"}, no: []string{"19.9.9", "21.0.0"}},
		{rng: "20", yes: []string{"20.5.0"}, no: []string{"21.0.0"}},
		{rng: "20.1", yes: []string{"20.1.9"}, no: []string{"20.2.0", "20.0.9"}},
		{rng: "20.1.2", yes: []string{"20.1.2"}, no: []string{"20.1.3"}},
		{rng: "=20.1.2", yes: []string{"20.1.2"}, no: []string{"20.1.1"}},
		{rng: "*", yes: []string{"0.0.0", "22.0.0"}},
		{rng: "", yes: []string{"18.0.0"}},
		{rng: "x", yes: []string{"18.0.0"}},
		{rng: ">*", no: []string{"18.0.0"}},
		{rng: "~20.1", yes: []string{"20.1.0", "20.1.7"}, no: []string{"20.2.0"}},
		{rng: "~20.1.3", yes: []string{"20.1.3"}, no: []string{"20.1.2", "20.2.0"}},
		{rng: "~20", yes: []string{"20.9.0"}, no: []string{"21.0.0"}},
		{rng: "^0.2.3", yes: []string{"0.2.9"}, no: []string{"0.3.0", "0.2.2"}},
		{rng: "^0.0.3", yes: []string{"0.0.3"}, no: []string{"0.0.4"}},
		{rng: "^0.0", yes: []string{"0.0.9"}, no: []string{"0.1.0"}},
		{rng: "^1", yes: []string{"1.9.9"}, no: []string{"2.0.0"}},
		{rng: ">20", yes: []string{"21.0.0"}, no: []string{"20.99.0"}},
		{rng: ">20.1", yes: []string{"20.2.0"}, no: []string{"20.1.9"}},
		{rng: ">20.1.2", yes: []string{"20.1.3"}, no: []string{"20.1.2"}},
		{rng: "<=20", yes: []string{"20.99.0"}, no: []string{"21.0.0"}},
		{rng: "<=20.1.2", yes: []string{"20.1.2"}, no: []string{"20.1.3"}},
		{rng: "<21", yes: []string{"20.99.0"}, no: []string{"21.0.0"}},
		{rng: ">=20 <23", yes: []string{"20.0.0", "22.9.9"}, no: []string{"23.0.0", "19.0.0"}},
		{rng: ">=20.0.0-0", yes: []string{"20.0.0"}, no: []string{"19.0.0"}},
		{rng: "18 - 20", yes: []string{"18.0.0", "20.9.9"}, no: []string{"17.9.9", "21.0.0"}},
		{rng: "18.1.0 - 20.2.3", yes: []string{"20.2.3"}, no: []string{"20.2.4", "18.0.9"}},
		{rng: "node >= 20", fail: true},
		{rng: ">=twenty", fail: true},
		{rng: "20.1.2.3", fail: true},
	} {
		r, err := parseSemverRange(tc.rng)
		if tc.fail {
			if err == nil {
				t.Errorf("%q: parsed as %v", tc.rng, r)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.rng, err)
			continue
		}
		for _, s := range tc.yes {
			if v := mustVersion(t, s); !r.match(v) {
				t.Errorf("%q does not match %s", tc.rng, s)
			}
		}
		for _, s := range tc.no {
			if v := mustVersion(t, s); r.match(v) {
				t.Errorf("%q matches %s", tc.rng, s)
			}
		}
	}
}

func TestParseNodeVersion(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"v20.19.2\n": "20.19.2", "22.12.0": "22.12.0", "v23.0.0-nightly2024": "23.0.0"} {
		v, err := parseNodeVersion(in)
		if err != nil || v.String() != want {
			t.Errorf("%q: %v %v, want %s", in, v, err, want)
		}
	}
	if _, err := parseNodeVersion("node: not found"); err == nil || !strings.Contains(err.Error(), "not a node version") {
		t.Errorf("garbage: %v", err)
	}
}

func TestSuggestMajor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rng, cur string
		want     int
		ok       bool
	}{
		{">=22.0.0", "20.19.2", 22, true},
		{">=21", "20.19.2", 22, true},           // an even line when one matches
		{"^21.1", "20.19.2", 21, true},          // else the odd one
		{">=20.6.0", "20.5.0", 20, true},        // a newer release of this line
		{"^20.10 || >=22", "18.20.0", 20, true}, // the nearest
		{"<21", "22.1.0", 20, true},             // an older line
		{">*", "22.1.0", 0, false},
	} {
		got, ok := suggestMajor(mustRange(t, tc.rng), mustVersion(t, tc.cur))
		if got != tc.want || ok != tc.ok {
			t.Errorf("suggestMajor(%q, %s) = %d, %v; want %d, %v", tc.rng, tc.cur, got, ok, tc.want, tc.ok)
		}
	}
}

func mustVersion(t *testing.T, s string) semver {
	t.Helper()
	v, err := parseNodeVersion(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func mustRange(t *testing.T, s string) semverRange {
	t.Helper()
	r, err := parseSemverRange(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
