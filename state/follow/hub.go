// Many followers of one event stream: the first follower of a state
// directory watches the stream and wakes the others over a unix socket, so
// a write of the stream wakes one watcher in the kernel, not one per
// follower (inotify's work is done in the writer's write).

package follow

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/runner-cli/runner/internal/atomicfile"
	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/filelock"
	"github.com/runner-cli/runner/internal/untrusted"
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

// errHubUntrusted: the process on the hub's socket is not a hub of
// runner's for this user (it did not show the state directory's token,
// or another user runs it), or it stayed silent while the stream grew.
var errHubUntrusted = errors.New("the events hub is not runner's, or it is silent")

// hubToken is the file, in the private state directory, of the token a
// hub shows each follower as its first line: only a process that may read
// the state directory can show it.
const hubToken = "events.sock.token"

// silentHubAfter is how long a follower waits for a wake while the stream
// grew before it leaves the hub and watches the stream itself.
const silentHubAfter = 5 * time.Second

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
	// Never through a link: a link put there would make us create the
	// file it points at.
	t := &tailer{path: store.EventsPath(0), emit: emit}
	defer t.close()
	// A client watches nothing (the hub does): the directory's watch,
	// set before the history was read, is dropped, and set again for a
	// follower that watches the stream itself.
	dir := store.Dir()
	_ = w.Remove(dir)
	alone := func(hub bool) error {
		if err := w.Add(dir); err != nil {
			return fmt.Errorf("follow the event stream: watch %s: %w", dir, err)
		}
		if hub {
			return runHub(ctx, store, w, sock, t)
		}
		return followTail(ctx, store, w, t)
	}
	for failures := 0; ctx.Err() == nil; {
		if release, err := filelock.Try(sock + ".lock"); err == nil {
			defer release()
			return alone(true)
		} else if !errors.Is(err, filelock.ErrHeld) {
			return alone(false) // no lock file here: each follower alone
		}
		conn, err := dialHub(sock, filepath.Join(store.Dir(), hubToken))
		if errors.Is(err, errHubUntrusted) {
			return alone(false)
		}
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
		err = followClient(ctx, conn, t)
		if errors.Is(err, errHubUntrusted) {
			return alone(false)
		}
		if !errors.Is(err, errHubGone) {
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
	// A look at the stream's size now and then: a hub that takes the
	// socket and never wakes anyone is left.
	check := time.NewTicker(silentHubAfter)
	defer check.Stop()
	lastWake := clock.Now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-check.C:
			if clock.Since(lastWake) >= silentHubAfter && t.behind() {
				return errHubUntrusted
			}
		case err := <-wakes:
			lastWake = clock.Now()
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
// wakes every client after each read. A hub that cannot make its token or
// its socket follows the stream alone.
func runHub(ctx context.Context, store *state.Store, w *fsnotify.Watcher, sock string, t *tailer) error {
	_ = os.Remove(sock) // a hub before us that did not clean up
	token := make([]byte, 16)
	if _, err := rand.Read(token); err != nil {
		return followTail(ctx, store, w, t)
	}
	hello := []byte(hex.EncodeToString(token) + "\n")
	tokenPath := filepath.Join(store.Dir(), hubToken)
	if err := atomicfile.Write(tokenPath, hello, 0o600, false); err != nil {
		return followTail(ctx, store, w, t)
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return followTail(ctx, store, w, t)
	}
	defer os.Remove(sock)
	defer ln.Close()
	cs := &hubClients{conns: map[net.Conn]chan struct{}{}}
	go cs.accept(ln, hello)
	defer cs.closeAll()
	return followTail(ctx, store, w, t, cs.wakeAll)
}

// hubClients are a hub's clients, each with its channel of wakes.
type hubClients struct {
	mu    sync.Mutex
	conns map[net.Conn]chan struct{}
}

// accept takes the clients that connect to ln until it is closed: each is
// shown hello (the token), then sent one byte per wake until it is gone.
func (cs *hubClients) accept(ln net.Listener, hello []byte) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		if _, err := c.Write(hello); err != nil {
			c.Close()
			continue
		}
		wake := make(chan struct{}, 1)
		cs.mu.Lock()
		cs.conns[c] = wake
		cs.mu.Unlock()
		go func() {
			defer func() {
				cs.mu.Lock()
				delete(cs.conns, c)
				cs.mu.Unlock()
				c.Close()
			}()
			for range wake {
				if _, err := c.Write([]byte{1}); err != nil {
					return
				}
			}
		}()
	}
}

// wakeAll wakes every client, never blocking: a client that has not read
// its last wake has a read due anyway.
func (cs *hubClients) wakeAll() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, wake := range cs.conns {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
}

// closeAll ends every client's connection.
func (cs *hubClients) closeAll() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for c, wake := range cs.conns {
		close(wake)
		c.Close()
	}
}

// dialHub connects to the hub on sock and checks that it is runner's for
// this user: the peer runs as this user, and its first line is the token
// of the state directory's token file.
func dialHub(sock, tokenPath string) (net.Conn, error) {
	conn, err := net.Dial("unix", sock)
	if err != nil {
		return nil, err
	}
	uc := conn.(*net.UnixConn)
	if uid, ok := peerUID(uc); !ok || uid != os.Getuid() {
		conn.Close()
		return nil, fmt.Errorf("%w: the socket %s is another user's", errHubUntrusted, sock)
	}
	conn.SetReadDeadline(clock.Deadline(2 * time.Second))
	line := make([]byte, 33)
	if _, err := io.ReadFull(conn, line); err != nil {
		conn.Close()
		return nil, fmt.Errorf("%w: no token from %s: %v", errHubUntrusted, sock, err)
	}
	conn.SetReadDeadline(time.Time{})
	want, err := readSmall(tokenPath, 64)
	if err != nil || !bytes.Equal(bytes.TrimSpace(want), bytes.TrimSpace(line)) {
		conn.Close()
		return nil, fmt.Errorf("%w: %s showed no token of the state directory's", errHubUntrusted, sock)
	}
	return conn, nil
}

// readSmall reads at most n bytes of a regular file (not through a link).
func readSmall(path string, n int64) ([]byte, error) {
	f, err := untrusted.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}
