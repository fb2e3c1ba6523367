package monitor

import (
	"bufio"
	"errors"
	"io"

	"github.com/runner-cli/runner/internal/untrusted"
)

// MaxLine bounds a line of the files a wait reads lines of: the hook's
// events file (the agent can write it) and the pane-died file. A longer
// line is skipped, said once (Monitor.LongLine), and reading goes on at
// the next one; what a read holds stays under MaxLine plus a buffer,
// however long the line.
const MaxLine = 1 << 20

// lineTail reads the complete lines appended to a file since its last
// read, by internal/untrusted's rules (a regular file, not through a
// link, never blocking). A line not ended yet is left for the next read,
// unless it is already over MaxLine: then it is dropped up to its end.
type lineTail struct {
	file string
	off  int64 // where the next read starts
	// skipping: off is inside a line over MaxLine, dropped up to its end.
	skipping bool
	// long, when set, is told where each line over MaxLine starts.
	long func(file string, off int64)
}

// read calls yield with each complete line (without its "\n") appended
// since the last read, in order.
func (t *lineTail) read(yield func(line string)) {
	f, err := untrusted.Open(t.file)
	if err != nil {
		return
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() < t.off {
		t.off, t.skipping = 0, false // truncated
	}
	if _, err := f.Seek(t.off, io.SeekStart); err != nil {
		return
	}
	r := bufio.NewReaderSize(f, 64<<10)
	pos, start := t.off, t.off // pos: read so far; start: the line's
	var line []byte
	tooLong := func() {
		if !t.skipping && t.long != nil {
			t.long(t.file, start)
		}
		t.skipping, line = true, nil
	}
	for {
		chunk, err := r.ReadSlice('\n')
		pos += int64(len(chunk))
		switch {
		case err == nil: // the line's end
			if !t.skipping && len(line)+len(chunk)-1 > MaxLine {
				tooLong()
			}
			if !t.skipping {
				line = append(line, chunk[:len(chunk)-1]...)
				yield(string(line))
			}
			t.off, start, t.skipping, line = pos, pos, false, line[:0]
		case errors.Is(err, bufio.ErrBufferFull):
			if !t.skipping && len(line)+len(chunk) > MaxLine {
				tooLong()
			}
			if t.skipping {
				t.off = pos
			} else {
				line = append(line, chunk...)
			}
		default: // the end for now: a line not ended stays for the next read
			if !t.skipping && len(line)+len(chunk) > MaxLine {
				tooLong()
			}
			if t.skipping {
				t.off = pos
			}
			return
		}
	}
}
