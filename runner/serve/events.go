package serve

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/state"
)

// events is GET /api/v1/events?after=CURSOR: Server-Sent Events, one per
// line `runner events --json` prints (data: the line; id: its cursor),
// from after the cursor (a reconnecting client's Last-Event-ID wins), then
// as they are written; a comment every Heartbeat while nothing happens.
// At most MaxFollowers streams at once (503 past them).
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	after, err := cursorOf(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if s.o.Follow == nil {
		writeError(w, http.StatusNotImplemented, "this server follows no event stream")
		return
	}
	select {
	case s.followers <- struct{}{}:
		defer func() { <-s.followers }()
	default:
		writeError(w, http.StatusServiceUnavailable, "too many event streams open: try again later")
		return
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	var mu sync.Mutex
	// write sends b; a client that takes more than a minute to take it is
	// dropped (the server has no WriteTimeout: streams are long).
	write := func(b []byte) {
		mu.Lock()
		defer mu.Unlock()
		if ctx.Err() != nil {
			return
		}
		rc.SetWriteDeadline(clock.Deadline(time.Minute))
		if _, err := w.Write(b); err != nil {
			cancel()
			return
		}
		if err := rc.Flush(); err != nil {
			cancel()
		}
	}
	write([]byte("retry: 3000\n: runner events\n\n"))
	done := make(chan error, 1)
	go func() {
		done <- s.o.Follow(ctx, after, func(line []byte) {
			line = bytes.TrimRight(line, "\r\n")
			c, ok := state.EventCursor(line)
			if !ok || bytes.ContainsAny(line, "\r\n") {
				return
			}
			write(fmt.Appendf(nil, "id: %d\ndata: %s\n\n", c, line))
		}, func(first uint64) {
			write(fmt.Appendf(nil, "event: lost\ndata: {\"first\":%d}\n\n", first))
		})
	}()
	tick := time.NewTicker(s.o.Heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			write([]byte(": heartbeat\n\n"))
		case err := <-done:
			if err != nil && ctx.Err() == nil {
				s.o.Log.Info("event stream failed", "error", err)
				write(fmt.Appendf(nil, "event: error\ndata: %q\n\n", err.Error()))
			}
			return
		case <-ctx.Done():
			<-done
			return
		}
	}
}

// cursorOf is the cursor a stream starts after: Last-Event-ID when the
// client reconnects, else ?after, else 0 (the oldest event kept).
func cursorOf(r *http.Request) (uint64, error) {
	v, what := r.Header.Get("Last-Event-ID"), "Last-Event-ID"
	if v == "" {
		v, what = r.URL.Query().Get("after"), "after"
	}
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s %q: a cursor is the number an event's id gives", what, v)
	}
	return n, nil
}
