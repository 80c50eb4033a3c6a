package lsp

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/sourcegraph/jsonrpc2"
)

// Limits of the base protocol framing. A language server is a subprocess we
// trust to be a language server, not to be well behaved: its output is read
// with bounds so that a broken or hostile server costs an error, never the
// gateway's memory.
const (
	// maxHeaderLine bounds one header line ("Content-Length: 123\r\n").
	maxHeaderLine = 1 << 10
	// maxHeaders bounds the header lines of one message.
	maxHeaders = 16
	// DefaultMaxMessageBytes bounds one message body.
	DefaultMaxMessageBytes = 64 << 20
)

// errFraming is wrapped by every framing error.
var errFraming = errors.New("lsp: bad framing")

// codec is the LSP base protocol (Content-Length framed JSON, see
// https://microsoft.github.io/language-server-protocol/specifications/base/0.9/specification/)
// as a [jsonrpc2.ObjectCodec], like [jsonrpc2.VSCodeObjectCodec] but with
// bounded header lines, header count and body size, and a body read whole
// (exactly Content-Length bytes) before it is decoded, so that a body with
// trailing bytes cannot desynchronise the stream.
type codec struct {
	maxBody int
	// failed, if set, records the framing error that ended the stream.
	failed *atomic.Pointer[error]
}

var _ jsonrpc2.ObjectCodec = codec{}

// WriteObject implements [jsonrpc2.ObjectCodec].
func (codec) WriteObject(w io.Writer, obj any) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	buf := make([]byte, 0, len(data)+32)
	buf = append(buf, "Content-Length: "...)
	buf = strconv.AppendInt(buf, int64(len(data)), 10)
	buf = append(buf, "\r\n\r\n"...)
	buf = append(buf, data...)
	_, err = w.Write(buf)
	return err
}

// ReadObject implements [jsonrpc2.ObjectCodec].
func (c codec) ReadObject(r *bufio.Reader, v any) error {
	body, err := readMessage(r, c.maxBody)
	if err == nil {
		if uerr := json.Unmarshal(body, v); uerr != nil {
			err = fmt.Errorf("%w: body: %w", errFraming, uerr)
		}
	}
	if err != nil && c.failed != nil && errors.Is(err, errFraming) {
		c.failed.CompareAndSwap(nil, &err)
	}
	return err
}

// readMessage reads one framed message and returns its body.
func readMessage(r *bufio.Reader, maxBody int) ([]byte, error) {
	if maxBody <= 0 {
		maxBody = DefaultMaxMessageBytes
	}
	length := -1
	for n := 0; ; n++ {
		if n > maxHeaders {
			return nil, fmt.Errorf("%w: more than %d header lines", errFraming, maxHeaders)
		}
		line, err := readLine(r)
		if err != nil {
			return nil, err
		}
		if line == "" {
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("%w: header line %q", errFraming, truncate(line, 64))
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			l, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
			if err != nil || l < 0 {
				return nil, fmt.Errorf("%w: Content-Length %q", errFraming, truncate(value, 32))
			}
			if l > int64(maxBody) {
				return nil, fmt.Errorf("%w: Content-Length %d over the %d limit", errFraming, l, maxBody)
			}
			length = int(l)
		}
	}
	if length < 0 {
		return nil, fmt.Errorf("%w: no Content-Length header", errFraming)
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: body shorter than Content-Length", errFraming)
		}
		return nil, err
	}
	return body, nil
}

// readLine reads a header line ending in \r\n, at most maxHeaderLine bytes,
// and returns it without the line end.
func readLine(r *bufio.Reader) (string, error) {
	var b strings.Builder
	for {
		chunk, err := r.ReadSlice('\n')
		if b.Len()+len(chunk) > maxHeaderLine {
			return "", fmt.Errorf("%w: header line over %d bytes", errFraming, maxHeaderLine)
		}
		b.Write(chunk)
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) && b.Len() > 0 {
			return "", fmt.Errorf("%w: truncated header", errFraming)
		}
		return "", err
	}
	line := b.String()
	if !strings.HasSuffix(line, "\r\n") {
		return "", fmt.Errorf("%w: header line not ended by \\r\\n", errFraming)
	}
	return line[:len(line)-2], nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
