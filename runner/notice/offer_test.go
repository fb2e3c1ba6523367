package notice

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOfferReplacesAnEarlierMerge: a message merged again replaces its
// notice, so a hook gives its latest text once; others stay.
func TestOfferReplacesAnEarlierMerge(t *testing.T) {
	dir, _ := offered(t)
	for _, n := range []Notice{
		{Message: "m_two", Merged: 1, Text: "two"},
		{Message: "m_one", Merged: 3, Text: "one, merged again", From: 7},
	} {
		if err := Offer(dir, n); err != nil {
			t.Fatal(err)
		}
	}
	got := List(dir)
	if len(got) != 2 || got[0].Name() != "m_one.3.json" || got[0].Text != "one, merged again" || got[0].From != 7 ||
		got[1].Name() != "m_two.1.json" {
		t.Errorf("List = %+v; want m_one at merge 3 then m_two", got)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("notices folder %v, %v; want 0700", fi, err)
	}
}

func TestOfferBoundsTheText(t *testing.T) {
	dir := Dir(t.TempDir())
	if err := Offer(dir, Notice{Message: "m_big", Text: strings.Repeat("x", maxText+10)}); err != nil {
		t.Fatal(err)
	}
	if got := List(dir); len(got) != 1 || len(got[0].Text) != maxText {
		t.Errorf("List = %d notices; want one with its text cut to %d bytes", len(got), maxText)
	}
}

// TestListSkipsWhatIsNotAnOffer: a file an agent could plant (bad JSON, a
// name that is not the notice's own, a link, not .json) is not a notice.
func TestListSkipsWhatIsNotAnOffer(t *testing.T) {
	dir, _ := offered(t)
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("bad.1.json", "{not json")
	b, _ := json.Marshal(Notice{Message: "m_x", Merged: 2, Text: "renamed"})
	write("m_y.2.json", string(b))
	write("m_x.2.txt", string(b))
	if err := os.Symlink(filepath.Join(dir, "m_one.1.json"), filepath.Join(dir, "m_z.1.json")); err != nil {
		t.Fatal(err)
	}
	if got := List(dir); len(got) != 1 || got[0].Message != "m_one" {
		t.Errorf("List = %+v; want m_one alone", got)
	}
	if got := List(filepath.Join(dir, "missing")); got != nil {
		t.Errorf("List of a missing folder = %v, want nil", got)
	}
}

// TestTakenReadsFromItsOffset: a taken event before the offer's offset (an
// earlier turn's) does not count; lines of other events are passed over.
func TestTakenReadsFromItsOffset(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events.jsonl")
	early := `{"event":"NoticeTaken","data":{"notices":["m_old.1.json"]}}` + "\n"
	late := `{"event":"Stop","data":{"notices":["m_stop.1.json"]}}` + "\n" +
		"not json, naming NoticeTaken\n" +
		`{"event":"NoticeTaken","data":{"notices":["m_a.1.json","m_b.2.json"]}}` + "\n"
	if err := os.WriteFile(events, []byte(early+late), 0o600); err != nil {
		t.Fatal(err)
	}
	got := Taken(events, int64(len(early)))
	if len(got) != 2 || !got["m_a.1.json"] || !got["m_b.2.json"] {
		t.Errorf("Taken from the offset = %v; want m_a.1.json and m_b.2.json", got)
	}
	if got := Taken(events, 0); !got["m_old.1.json"] || len(got) != 3 {
		t.Errorf("Taken from 0 = %v; want the early one too", got)
	}
	if got := Taken(filepath.Join(t.TempDir(), "none"), 0); len(got) != 0 {
		t.Errorf("Taken of a missing file = %v, want none", got)
	}
}

// TestSettleWithNothingTaken: every offer is withdrawn, none reported.
func TestSettleWithNothingTaken(t *testing.T) {
	dir, events := offered(t)
	if taken := Settle(dir, events); len(taken) != 0 {
		t.Errorf("Settle = %v; want none taken", taken)
	}
	if ns := List(dir); len(ns) != 0 {
		t.Errorf("offers left after Settle: %v", ns)
	}
	if out, err := Take(dir, events, "PostToolUse"); out != nil || err != nil {
		t.Errorf("Take with no offers = %s, %v; want nothing", out, err)
	}
}

// TestTakeRefusesALinkedEventsFile: an events file replaced by a link (an
// agent's doing) is neither locked nor written through, and nothing is
// given, so the notice stays for Settle to report untaken.
func TestTakeRefusesALinkedEventsFile(t *testing.T) {
	dir, events := offered(t)
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(target, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(events); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, events); err != nil {
		t.Fatal(err)
	}
	if out, err := Take(dir, events, "AfterTool"); err == nil || out != nil {
		t.Errorf("Take = %s, %v; want an error and no output", out, err)
	}
	if b, _ := os.ReadFile(target); len(b) != 0 {
		t.Errorf("the link's target was written: %q", b)
	}
}
