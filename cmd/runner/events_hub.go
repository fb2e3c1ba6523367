// Many followers of one event stream: the first `runner events --follow`
// of a state directory watches the stream and wakes the others over a
// unix socket, so a write of the stream wakes one watcher in the kernel,
// not one per follower (inotify's work is done in the writer's write).

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/gofrs/flock"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/state"
)

// eventsSocket is the hub's socket in the state directory; its lock file
// (eventsSocket + ".lock") elects the hub.
const eventsSocket = "events.sock"

// maxSocketPath bounds a unix socket's path (sun_path is 108 bytes on
// Linux, 104 elsewhere): a longer state directory has no hub, each
// follower watches the stream itself.
const maxSocketPath = 100

// errHubGone: the hub a follower listened to exited.
var errHubGone = errors.New("the events hub is gone")

// followShared follows the event stream (see followEvents) as the hub of
// the state directory's followers, or as a client of the hub: woken by it,
// reading the stream itself. A client whose hub exits takes its place (or
// joins the one that did); it reads the file again from where it was, so
// nothing is missed. w watches the state directory (for a hub).
func followShared(ctx context.Context, store *state.Store, w *fsnotify.Watcher, emit func(line []byte) bool) error {
	sock := filepath.Join(store.Dir(), eventsSocket)
	if len(sock) > maxSocketPath {
		return followEvents(ctx, store, w, emit)
	}
	lock := flock.New(sock + ".lock")
	t := &tailer{path: store.EventsPath(0), emit: emit}
	defer t.close()
	// A client watches nothing (the hub does): the directory's watch,
	// set before the history was read, is dropped, and set again for a
	// follower that watches the stream itself.
	dir := store.Dir()
	_ = w.Remove(dir)
	alone := func(hub bool) error {
		if err := w.Add(dir); err != nil {
			return fmt.Errorf("events --follow: watch %s: %w", dir, err)
		}
		if hub {
			return runHub(ctx, store, w, sock, t)
		}
		return followTail(ctx, store, w, t)
	}
	for failures := 0; ctx.Err() == nil; {
		if held, err := lock.TryLock(); err != nil {
			return alone(false) // no lock file here: each follower alone
		} else if held {
			defer lock.Unlock()
			return alone(true)
		}
		conn, err := net.Dial("unix", sock)
		if err != nil {
			// The hub is starting (or exiting): again shortly; a hub
			// that never listens is left for a watch of our own.
			if failures++; failures > 50 {
				return alone(false)
			}
			time.Sleep(20 * time.Millisecond)
			continue
		}
		failures = 0
		if err := followClient(ctx, conn, t); !errors.Is(err, errHubGone) {
			return err
		}
	}
	return nil
}

// followClient reads the stream (t) each time the hub on conn wakes it,
// at most every followGap, and once at the start (what came before it
// connected). It returns errHubGone when the hub exits.
func followClient(ctx context.Context, conn net.Conn, t *tailer) error {
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	wakes := make(chan error, 1)
	go func() {
		buf := make([]byte, 64)
		for {
			_, err := conn.Read(buf)
			select {
			case wakes <- err:
			default: // a read is due already
			}
			if err != nil {
				return
			}
		}
	}()
	if err := t.drain(true); err != nil {
		return err
	}
	var lastRead time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-wakes:
			if ctx.Err() != nil {
				return nil
			}
			if wait := followGap - clock.Since(lastRead); wait > 0 {
				time.Sleep(wait)
			}
			lastRead = clock.Now()
			// A wake may mean a rotation: look at the name each time.
			if derr := t.drain(true); derr != nil {
				return derr
			}
			if err != nil {
				return errHubGone
			}
		}
	}
}

// runHub follows the stream (t, where it left) with its own watch (w) and
// wakes every client after each read: one byte each, never blocking (a
// client that has not read its last wake has a read due anyway).
func runHub(ctx context.Context, store *state.Store, w *fsnotify.Watcher, sock string, t *tailer) error {
	_ = os.Remove(sock) // a hub before us that did not clean up
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return followTail(ctx, store, w, t)
	}
	defer os.Remove(sock)
	defer ln.Close()
	var mu sync.Mutex
	clients := map[net.Conn]chan struct{}{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wake := make(chan struct{}, 1)
			mu.Lock()
			clients[c] = wake
			mu.Unlock()
			go func() {
				defer func() {
					mu.Lock()
					delete(clients, c)
					mu.Unlock()
					c.Close()
				}()
				for range wake {
					if _, err := c.Write([]byte{1}); err != nil {
						return
					}
				}
			}()
		}
	}()
	defer func() {
		mu.Lock()
		for c, wake := range clients {
			close(wake)
			c.Close()
		}
		mu.Unlock()
	}()
	return followTail(ctx, store, w, t, func() {
		mu.Lock()
		defer mu.Unlock()
		for _, wake := range clients {
			select {
			case wake <- struct{}{}:
			default:
			}
		}
	})
}
