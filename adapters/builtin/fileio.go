package builtin

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
)

// sniffLen is how much of a file decides whether it is binary.
const sniffLen = 8 << 10

// openTarget is [Workspace.open] on the call's workspace.
func (c *call) openTarget(rel string) (*os.Root, resolved, error) {
	return c.ws.open(rel)
}

// isBinary reports whether data (a file's first bytes) looks binary: it has
// a NUL byte, the test git and grep use.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), sniffLen)], 0) >= 0
}

// readText reads a regular text file of at most maxBytes for a tool that
// rewrites it. Its errors are messages for the model.
func readText(root *os.Root, r resolved, maxBytes int) ([]byte, fs.FileMode, error) {
	info, err := root.Stat(r.rel)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %s", r.name, describeErr(err))
	}
	if !info.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s is not a regular file", r.name)
	}
	if info.Size() > int64(maxBytes) {
		return nil, 0, fmt.Errorf("%s is %s, over the %s limit", r.name, formatSize(info.Size()), formatSize(int64(maxBytes)))
	}
	data, err := root.ReadFile(r.rel)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %s", r.name, describeErr(err))
	}
	if isBinary(data) {
		return nil, 0, fmt.Errorf("%s is a binary file", r.name)
	}
	return data, info.Mode().Perm(), nil
}

// writeAtomic writes data to rel inside root: parent directories are
// created, the bytes go to a fresh temporary file in the same directory
// (O_CREATE|O_EXCL, which never follows a symlink) and a rename puts it in
// place, so readers see the old or the new file, never a torn one.
func writeAtomic(root *os.Root, rel string, data []byte, perm fs.FileMode) error {
	_, err := writeAtomicFrom(root, rel, bytes.NewReader(data), perm)
	return err
}

// writeCounted is [writeAtomic] within the workspace's quota: old is the
// size of the file it replaces (0 for a new one), and a write that would
// grow the workspace past the quota is refused with a *QuotaError before
// anything is written, so the old file stays as it was.
func (s *Set) writeCounted(ctx context.Context, root *os.Root, r resolved, data []byte, perm fs.FileMode, old int64) error {
	grow := int64(len(data)) - old
	res, err := s.quota.reserve(ctx, r.root, grow)
	if err != nil {
		return err
	}
	if err := writeAtomic(root, r.rel, data, perm); err != nil {
		res.done(0)
		return err
	}
	res.done(grow)
	return nil
}

// writeAtomicFrom is [writeAtomic] streaming from src; it returns the bytes
// written. When src fails (a size limit, a broken upload) the temporary file
// is removed and the old file, if any, stays as it was.
func writeAtomicFrom(root *os.Root, rel string, src io.Reader, perm fs.FileMode) (int64, error) {
	dir := path.Dir(rel)
	if err := root.MkdirAll(dir, 0o750); err != nil {
		return 0, err
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := path.Join(dir, "."+path.Base(rel)+".tmp-"+hex.EncodeToString(rnd[:]))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, src)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, rel)
	}
	if err != nil {
		_ = root.Remove(tmp)
	}
	return n, err
}

// describeErr renders a file system error without the path (the caller
// names it).
func describeErr(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file or directory"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	}
	return err.Error()
}

// lineScanner yields the lines of a reader without their "\n" (and "\r");
// a line longer than max is cut to max bytes and flagged.
type lineScanner struct {
	br   *bufio.Reader
	max  int
	line []byte
	cut  bool
	err  error
}

func newLineScanner(r io.Reader, limit int) *lineScanner {
	return &lineScanner{br: bufio.NewReaderSize(r, 64<<10), max: limit}
}

func (s *lineScanner) next() bool {
	s.line, s.cut = s.line[:0], false
	got := false
	for {
		chunk, err := s.br.ReadSlice('\n')
		got = got || len(chunk) > 0
		if err == nil {
			chunk = bytes.TrimSuffix(chunk[:len(chunk)-1], []byte("\r"))
		}
		if room := s.max - len(s.line); len(chunk) > room {
			chunk, s.cut = chunk[:room], true
		}
		s.line = append(s.line, chunk...)
		switch err {
		case nil:
			return true
		case bufio.ErrBufferFull:
			continue
		case io.EOF:
			return got
		default:
			s.err = err
			return false
		}
	}
}
