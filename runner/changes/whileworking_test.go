package changes

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestWhileWorking: a quiet agent is never looked at; output is looked at
// once a pause has passed, and several writes meanwhile make one look.
func TestWhileWorking(t *testing.T) {
	wrote := make(chan struct{}, 1)
	var looks atomic.Int32
	looked := make(chan struct{}, 4)
	stop := WhileWorking(context.Background(), wrote, func(context.Context) {
		looks.Add(1)
		looked <- struct{}{}
	})
	for range 3 {
		select {
		case wrote <- struct{}{}:
		default:
		}
	}
	select {
	case <-looked:
	case <-time.After(20 * Every):
		t.Fatal("output was never looked at")
	}
	stop()
	if n := looks.Load(); n != 1 {
		t.Errorf("%d looks for one burst of output, want 1", n)
	}
	quiet := WhileWorking(context.Background(), make(chan struct{}), func(context.Context) { t.Error("a quiet agent looked at") })
	quiet()
}
