package remote

import (
	"context"
	"testing"
)

// The early stream goes to its supervisor once; released, it is stopped
// unless taken; a stream that could not start is nil and safe to use.
func TestEarly(t *testing.T) {
	stops := 0
	e := NewEarly(context.Background(), func() { stops++ })
	if _, _, ok := e.Take(); !ok {
		t.Fatal("not taken")
	}
	if _, _, ok := e.Take(); ok {
		t.Error("taken twice")
	}
	e.Release()
	if stops != 0 {
		t.Errorf("a taken stream stopped by release (%d)", stops)
	}
	e2 := NewEarly(context.Background(), func() { stops++ })
	e2.Release()
	e2.Release()
	if stops != 1 {
		t.Errorf("released twice: %d stops, want 1", stops)
	}
	var none *Early
	none.Release()
	if _, _, ok := none.Take(); ok {
		t.Error("a nil stream taken")
	}
}
