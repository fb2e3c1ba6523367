// Where a process waits for the answers to the changes it handed over.

package state

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// An inbox is one process's fifo in a state directory's queue, made once
// and kept while the process lives: holders write "NAME ANSWER\n" lines to
// it (each write whole lines of at most PIPE_BUF bytes, so writers never
// interleave), and one goroutine hands each answer to the UpdateTask
// waiting for op NAME. An op's name carries its inbox's id. A holder that
// answers an op of its own process hands the answer over in memory.
type inbox struct {
	id     string // the fifo is in/<id>.fifo in the queue (fifoPath)
	f      *os.File
	mu     sync.Mutex
	wait   map[string]chan byte
	inLine bool // a goroutine of this process waits for the lock to serve the queue
}

// getInLine makes sure one goroutine of this process waits for the lock
// (at most the store's lockWait) to serve the queue: it applies what is
// queued when its turn comes, whether or not the op it came for was
// answered meanwhile.
func (b *inbox) getInLine(s *Store) {
	b.mu.Lock()
	if b.inLine {
		b.mu.Unlock()
		return
	}
	b.inLine = true
	b.mu.Unlock()
	go func() {
		unlock, err := s.flockPatient(context.Background(), s.path(LockFile))
		b.mu.Lock()
		b.inLine = false
		b.mu.Unlock()
		if err == nil {
			s.applyBatch(nil, func() { unlock(); s.passLead() }, nil)
		}
	}()
}

// inboxes holds this process's inbox per queue directory: like
// updateQueues, as wide as the process, because the fifo is. Its map is
// made on first use: a map literal here is built in every process's init.
var inboxes struct {
	mu sync.Mutex
	m  map[string]*inbox
}

// openInbox returns this process's inbox in the queue dir, making it the
// first time.
func openInbox(dir string) (*inbox, error) {
	inboxes.mu.Lock()
	defer inboxes.mu.Unlock()
	if b := inboxes.m[dir]; b != nil {
		return b, nil
	}
	var r [6]byte
	if _, err := rand.Read(r[:]); err != nil {
		return nil, err
	}
	b := &inbox{id: fmt.Sprintf("p%dx%s", os.Getpid(), hex.EncodeToString(r[:])), wait: map[string]chan byte{}}
	if err := os.Mkdir(filepath.Join(dir, inboxDir), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	sweepInboxes(dir)
	path := fifoPath(dir, b.id)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		return nil, err
	}
	// Read and write: a fifo with no writer reads as at its end at once,
	// and holding it open for writing too keeps it from ever ending.
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW, 0)
	if err != nil {
		os.Remove(path)
		return nil, err
	}
	b.f = f
	go b.read()
	if inboxes.m == nil {
		inboxes.m = map[string]*inbox{}
	}
	inboxes.m[dir] = b
	return b, nil
}

// read hands each answer line to its waiter, for the life of the process.
func (b *inbox) read() {
	r := bufio.NewReader(b.f)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		name, a, ok := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		if ok && len(a) == 1 {
			b.deliver(name, a[0])
		}
	}
}

// expect registers op name; its answers arrive on the returned channel.
func (b *inbox) expect(name string) chan byte {
	ch := make(chan byte, 4)
	b.mu.Lock()
	b.wait[name] = ch
	b.mu.Unlock()
	return ch
}

// forget drops op name's waiter.
func (b *inbox) forget(name string) {
	b.mu.Lock()
	delete(b.wait, name)
	b.mu.Unlock()
}

// deliver gives op name its answer, if anyone still waits for it.
func (b *inbox) deliver(name string, a byte) {
	b.mu.Lock()
	ch := b.wait[name]
	b.mu.Unlock()
	if ch != nil {
		select {
		case ch <- a:
		default: // a waiter takes one answer; extra ones (a lead) can go
		}
	}
}

// inboxOf is the id of the inbox op name's answers go to.
func inboxOf(name string) string {
	parts := strings.Split(name, "-")
	if len(parts) != 3 {
		return ""
	}
	return parts[1]
}

// mine returns this process's inbox with that id in dir, if it is one.
func mine(dir, id string) *inbox {
	inboxes.mu.Lock()
	defer inboxes.mu.Unlock()
	if b := inboxes.m[dir]; b != nil && b.id == id {
		return b
	}
	return nil
}

// An answer is one line for an inbox.
type answer struct {
	name string
	a    byte
}

// send writes answers to inbox id in dir, whole lines at most PIPE_BUF
// bytes a write. gone is true when the inbox's process is gone (no reader:
// ENXIO; the fifo is removed then); ok is false when the answers could
// not be written.
func send(dir, id string, answers []answer) (ok, gone bool) {
	if b := mine(dir, id); b != nil {
		for _, x := range answers {
			b.deliver(x.name, x.a)
		}
		return true, false
	}
	path := fifoPath(dir, id)
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, syscall.ENXIO) {
			os.Remove(path)
			return false, true
		}
		return false, false
	}
	defer f.Close()
	var buf []byte
	for _, x := range answers {
		line := x.name + " " + string(x.a) + "\n"
		if len(buf)+len(line) > pipeBuf {
			if _, err := f.Write(buf); err != nil {
				return false, false
			}
			buf = buf[:0]
		}
		buf = append(buf, line...)
	}
	_, err = f.Write(buf)
	return err == nil, false
}

// lost reports whether b's fifo is gone from dir (removed by hand): other
// processes cannot answer b then, though its own process still can.
func (b *inbox) lost(dir string) bool {
	_, err := os.Stat(fifoPath(dir, b.id))
	return errors.Is(err, fs.ErrNotExist)
}

// pipeBuf is POSIX's PIPE_BUF floor: a write to a fifo of at most this
// many bytes is never interleaved with another writer's.
const pipeBuf = 512

// inboxDir holds the inboxes inside the queue, apart from the ops, so
// that a holder's look at the queue does not grow with the processes.
const inboxDir = "in"

// fifoPath is the fifo of inbox id in the queue dir.
func fifoPath(dir, id string) string { return filepath.Join(dir, inboxDir, id+".fifo") }

// sweepInboxes removes the inboxes of processes that are gone (an inbox
// stays while its process lives; nothing removes it when it exits). The
// pid is in the name; one reused since only keeps a dead inbox longer.
func sweepInboxes(dir string) {
	ents, err := os.ReadDir(filepath.Join(dir, inboxDir))
	if err != nil {
		return
	}
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "p%dx", &pid); err != nil || pid <= 0 {
			continue
		}
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			os.Remove(filepath.Join(dir, inboxDir, e.Name()))
		}
	}
}
