package clock

import (
	"testing"
	"time"
)

func TestClock(t *testing.T) {
	before := time.Now()
	now := Now()
	after := time.Now()
	if now.Before(before.Add(Offset)) || now.After(after.Add(Offset)) {
		t.Fatalf("Now() = %v, not within [%v, %v] shifted by %v", now, before, after, Offset)
	}
	if d := Since(now); d < 0 || d > time.Hour {
		t.Fatalf("Since(Now()) = %v", d)
	}
	if d := Until(now.Add(time.Hour)); d <= 0 || d > time.Hour {
		t.Fatalf("Until(Now()+1h) = %v", d)
	}
	if got := Real(Outside(before)); !got.Equal(before) {
		t.Fatalf("Real(Outside(t)) = %v, want %v", got, before)
	}
	if d := Outside(before).Sub(now); d > 0 || d < -time.Hour {
		t.Fatalf("an outside time brought onto the clock is %v from Now()", d)
	}
	if !Outside(time.Time{}).IsZero() || !Real(time.Time{}).IsZero() {
		t.Fatal("the zero time moved")
	}
}
