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
// after=now starts at the newest event: the stream opens with an id line
// of its cursor and no data, so that a browser reconnecting goes on from
// there (the page reads the tasks, then follows from now, never the whole
// history). At most MaxFollowers streams at once (503 past them).
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	after, now, ok := s.streamStart(w, r)
	if !ok {
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
	if now {
		write(fmt.Appendf(nil, "retry: 3000\nid: %d\n: runner events from now\n\n", after))
	} else {
		write([]byte("retry: 3000\n: runner events\n\n"))
	}
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

// streamStart is the cursor an event stream starts after, and whether
// it is the newest (after=now); false when it wrote an error instead.
func (s *Server) streamStart(w http.ResponseWriter, r *http.Request) (after uint64, now, ok bool) {
	after, now, err := cursorOf(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return 0, false, false
	}
	if s.o.Follow == nil || (now && s.o.Last == nil) {
		writeError(w, http.StatusNotImplemented, "this server follows no event stream")
		return 0, false, false
	}
	if now {
		if after, err = s.o.Last(r.Context()); err != nil {
			s.o.Log.Info("event stream: the newest cursor", "error", err)
			writeError(w, http.StatusInternalServerError, "the event stream's newest cursor could not be read: see the server's log")
			return 0, false, false
		}
	}
	return after, now, true
}

// cursorOf is the cursor a stream starts after: Last-Event-ID when the
// client reconnects, else ?after, else 0 (the oldest event kept); now
// when ?after is "now" (the newest event, which the caller reads).
func cursorOf(r *http.Request) (after uint64, now bool, err error) {
	v, what := r.Header.Get("Last-Event-ID"), "Last-Event-ID"
	if v == "" {
		v, what = r.URL.Query().Get("after"), "after"
	}
	switch {
	case v == "":
		return 0, false, nil
	case v == "now" && what == "after":
		return 0, true, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%s %q: a cursor is the number an event's id gives (or ?after=now)", what, v)
	}
	return n, false, nil
}
