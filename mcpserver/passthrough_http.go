package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"mime"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// httpLink reaches a streamable-HTTP upstream: each message is POSTed as
// it came, with the upstream session's id, and the upstream's answer (JSON
// or an event stream) is read message by message; the standalone stream is
// the upstream's GET stream, relayed.
type httpLink struct {
	url    string
	client *http.Client
	// header is of every request upstream: its session id once
	// initialize answered. Requests with a protocol version use
	// versioned, the header with the version last asked for.
	header    atomic.Pointer[http.Header]
	versioned atomic.Pointer[versionedHeader]
}

type versionedHeader struct {
	base    *http.Header
	version string
	h       http.Header
}

var initialHeader = http.Header{
	"Content-Type": {"application/json"},
	"Accept":       {"application/json, text/event-stream"},
}

// headers is the header of a request upstream; never written to (net/http
// does not, and the upstream client's round trippers clone first).
func (l *httpLink) headers(out outHeader) http.Header {
	base := l.header.Load()
	if base == nil {
		base = &initialHeader
	}
	version := out.version
	if out.mcp != nil {
		h := base.Clone()
		if version != "" {
			h.Set(headerProtocol, version)
		}
		for k, v := range out.mcp {
			h[k] = v
		}
		return h
	}
	if version == "" {
		return *base
	}
	if v := l.versioned.Load(); v != nil && v.base == base && v.version == version {
		return v.h
	}
	h := base.Clone()
	h.Set(headerProtocol, version)
	l.versioned.Store(&versionedHeader{base: base, version: version, h: h})
	return h
}

func (l *httpLink) do(ctx context.Context, method string, out outHeader, body []byte) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, l.url, rd)
	if err != nil {
		return nil, err
	}
	req.Header = l.headers(out)
	return l.client.Do(req)
}

func (l *httpLink) hasSession() bool { return l.header.Load() != nil }

// refused reads and closes a response that is not the answer wanted.
func (l *httpLink) refused(resp *http.Response) error {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound && l.hasSession() {
		return errGone // the upstream forgot the session: the client starts anew
	}
	return statusError(resp.StatusCode)
}

func (l *httpLink) call(ctx context.Context, out outHeader, msg []byte, _ json.RawMessage) (iter.Seq[[]byte], error) {
	resp, err := l.do(ctx, http.MethodPost, out, msg)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" &&
			!(resp.StatusCode == http.StatusNotFound && l.hasSession()) {
			// A JSON-RPC answer with its own status (2026-07-28).
			data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
			_ = resp.Body.Close()
			if err == nil && len(data) <= maxAnswer {
				return nil, &rpcAnswer{status: resp.StatusCode, msg: data}
			}
			return nil, statusError(resp.StatusCode)
		}
		return nil, l.refused(resp)
	}
	if sid := resp.Header.Get(headerSession); sid != "" && !l.hasSession() {
		h := initialHeader.Clone()
		h.Set(headerSession, sid)
		l.header.Store(&h)
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mt {
	case "text/event-stream":
		return sseMessages(resp.Body), nil
	case "application/json":
		return jsonMessage(resp.Body), nil
	}
	_ = resp.Body.Close()
	return nil, errors.New("answered with Content-Type " + strconv.Quote(mt))
}

func (l *httpLink) send(ctx context.Context, out outHeader, msg []byte) error {
	resp, err := l.do(ctx, http.MethodPost, out, msg)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return l.refused(resp)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.Body.Close()
}

func (l *httpLink) listen(ctx context.Context, out outHeader) (iter.Seq[[]byte], error) {
	resp, err := l.do(ctx, http.MethodGet, out, nil)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, l.refused(resp)
	}
	return sseMessages(resp.Body), nil
}

// closeTimeout bounds telling the upstream that a session ended.
const closeTimeout = 5 * time.Second

// close ends the upstream session with a DELETE, as a client does.
func (l *httpLink) close() {
	if !l.hasSession() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	if resp, err := l.do(ctx, http.MethodDelete, outHeader{}, nil); err == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
	}
}
