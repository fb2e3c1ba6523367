// Package tailfile reads the end of a file that an agent can name or
// write — a CLI's transcript, a session's chat or events file, a task's
// pane transcript or events file — by internal/untrusted's rules (a
// regular file only, not through a final link, never blocking): the last
// n bytes whole (Bytes), or line by line with where each line starts
// (Lines). It is the module's one "seek to the last n bytes".
package tailfile

import (
	"bufio"
	"io"
	"os"

	"github.com/runner-cli/runner/internal/untrusted"
)

// Open opens the file at path by internal/untrusted's rules, placed at
// its last n bytes (at its start when it is smaller); off is that place.
func Open(path string, n int64) (f *os.File, off int64, err error) {
	f, err = untrusted.Open(path)
	if err != nil {
		return nil, 0, err
	}
	if st, err := f.Stat(); err == nil && st.Size() > n {
		off = st.Size() - n
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			f.Close()
			return nil, 0, err
		}
	}
	return f, off, nil
}

// Bytes is the last n bytes of the file at path (what the file has at
// most: its end as it grows is not read).
func Bytes(path string, n int64) ([]byte, error) {
	f, _, err := Open(path, n)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}

// Line is a line of a file's end.
type Line struct {
	// Text is the line without its line end ("\n" or "\r\n"); valid
	// until the next line is read.
	Text []byte
	// Off is where the line starts in the file.
	Off int64
	// Cut: the first line of an end that starts inside the file (it may
	// be the end of a line only).
	Cut bool
	// Whole: the line ends with a newline (the file's last line may not
	// be written whole yet).
	Whole bool
}

// Lines calls yield with each line of the last n bytes of the file at
// path, in order, until yield returns false. A line longer than n ends
// the reading. err is the opening's (the lines of a file that cannot be
// read are none).
func Lines(path string, n int64, yield func(Line) bool) error {
	f, off, err := Open(path, n)
	if err != nil {
		return err
	}
	defer f.Close()
	var l Line
	next, first := off, off > 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, min(n, 64*1024)), int(n))
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		adv, tok, err := bufio.ScanLines(data, atEOF)
		if tok != nil {
			l = Line{Off: next, Cut: first, Whole: data[adv-1] == '\n'}
			next, first = next+int64(adv), false
		}
		return adv, tok, err
	})
	for sc.Scan() {
		l.Text = sc.Bytes()
		if !yield(l) {
			break
		}
	}
	return nil
}
