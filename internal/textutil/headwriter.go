package textutil

import (
	"bytes"
	"strings"
	"sync"
)

// HeadWriter keeps the first Max bytes written to it and swallows the
// rest (a subprocess's flood of output must not grow its reader). It is
// safe for concurrent writes.
type HeadWriter struct {
	Max int
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write keeps what fits; it never fails.
func (w *HeadWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if room := w.Max - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// Bytes returns what was kept.
func (w *HeadWriter) Bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.buf.Bytes())
}

// String returns what was kept.
func (w *HeadWriter) String() string { return string(w.Bytes()) }

// TailWriter keeps the last Max bytes written to it (a subprocess's
// stderr or output, whose end says why it failed). It is safe for
// concurrent writes.
type TailWriter struct {
	Max int
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write keeps p, dropping what falls out of the last Max bytes; it never
// fails.
func (w *TailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if extra := w.buf.Len() - w.Max; extra > 0 {
		w.buf.Next(extra)
	}
	return len(p), nil
}

// String returns what was kept, without a rune cut at its start.
func (w *TailWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.ToValidUTF8(w.buf.String(), "")
}
