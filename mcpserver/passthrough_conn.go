package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connLink reaches an upstream through an SDK transport's connection
// (stdio, SSE), which carries messages, not requests with answers of their
// own: each message is written as it came, and one goroutine (read) hands
// each message of the upstream to the request it belongs to — a response
// to its request, progress to the request with its token, list changes and
// resource updates to the standalone stream, and anything else (logging,
// the upstream's own requests) to the newest request in flight, else to
// the standalone stream.
type connLink struct {
	conn mcp.Connection
	done chan struct{} // closed when read ends
	// standalone holds the messages of the standalone stream until a GET
	// takes them; past its room they are dropped.
	standalone chan []byte

	// mu guards the fields below.
	mu        sync.Mutex
	calls     map[string]*connCall // request id (idKey) -> call
	order     []*connCall          // in flight, oldest first
	listening bool
}

// connCall is a request in flight on a connLink.
type connCall struct {
	id, token string
	msgs      chan []byte
	gone      chan struct{} // closed once its answer is no longer read
}

// sessionWide are the upstream's notifications that belong to no request.
var sessionWide = map[string]bool{
	"notifications/tools/list_changed":     true,
	"notifications/resources/list_changed": true,
	"notifications/prompts/list_changed":   true,
	"notifications/resources/updated":      true,
}

func newConnLink(conn mcp.Connection) *connLink {
	return &connLink{conn: conn, done: make(chan struct{}), standalone: make(chan []byte, 64), calls: map[string]*connCall{}}
}

// read hands the upstream's messages on until the connection ends.
func (l *connLink) read() {
	defer close(l.done)
	for {
		msg, err := l.conn.Read(context.Background()) // Close ends it
		if err != nil {
			return
		}
		data, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			continue
		}
		l.route(msg, data)
	}
}

func (l *connLink) route(msg jsonrpc.Message, data []byte) {
	var c *connCall
	l.mu.Lock()
	switch m := msg.(type) {
	case *jsonrpc.Response:
		if c = l.calls[idKey(m.ID)]; c == nil {
			l.mu.Unlock()
			return // its request is gone
		}
	case *jsonrpc.Request:
		if sessionWide[m.Method] {
			break
		}
		if m.Method == "notifications/progress" {
			var p struct {
				Token json.RawMessage `json:"progressToken"`
			}
			if json.Unmarshal(m.Params, &p) == nil && p.Token != nil {
				key := tokenKey(p.Token)
				if i := slices.IndexFunc(l.order, func(c *connCall) bool { return c.token == key }); i >= 0 {
					c = l.order[i]
				}
			}
		}
		if c == nil && len(l.order) > 0 {
			c = l.order[len(l.order)-1]
		}
	}
	l.mu.Unlock()
	if c == nil {
		select {
		case l.standalone <- data:
		default:
		}
		return
	}
	select {
	case c.msgs <- data:
	case <-c.gone:
	}
}

func (l *connLink) call(ctx context.Context, _ outHeader, msg []byte, _ json.RawMessage) (iter.Seq[[]byte], error) {
	m, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		return nil, err
	}
	req, ok := m.(*jsonrpc.Request)
	if !ok {
		return nil, errors.New("not a request")
	}
	var prm struct {
		Meta struct {
			Token json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(req.Params, &prm)
	c := &connCall{id: idKey(req.ID), msgs: make(chan []byte, 16), gone: make(chan struct{})}
	if prm.Meta.Token != nil {
		c.token = tokenKey(prm.Meta.Token)
	}
	l.mu.Lock()
	l.calls[c.id] = c
	l.order = append(l.order, c)
	l.mu.Unlock()
	if err := l.conn.Write(ctx, req); err != nil {
		l.forget(c)
		return nil, err
	}
	return func(yield func([]byte) bool) {
		defer l.forget(c)
		for {
			select {
			case b := <-c.msgs:
				if !yield(b) {
					return
				}
			case <-ctx.Done():
				return
			case <-l.done:
				for {
					select {
					case b := <-c.msgs:
						if !yield(b) {
							return
						}
					default:
						return
					}
				}
			}
		}
	}, nil
}

// forget ends a call: its answer is no longer read.
func (l *connLink) forget(c *connCall) {
	l.mu.Lock()
	if l.calls[c.id] == c {
		delete(l.calls, c.id)
	}
	if i := slices.Index(l.order, c); i >= 0 {
		l.order = slices.Delete(l.order, i, i+1)
	}
	l.mu.Unlock()
	close(c.gone)
}

func (l *connLink) send(ctx context.Context, _ outHeader, msg []byte) error {
	m, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		return err
	}
	return l.conn.Write(ctx, m)
}

func (l *connLink) listen(ctx context.Context, _ outHeader) (iter.Seq[[]byte], error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.listening {
		return nil, statusError(http.StatusConflict) // one standalone stream at a time
	}
	l.listening = true
	return func(yield func([]byte) bool) {
		defer func() {
			l.mu.Lock()
			l.listening = false
			l.mu.Unlock()
		}()
		for {
			select {
			case b := <-l.standalone:
				if !yield(b) {
					return
				}
			case <-ctx.Done():
				return
			case <-l.done:
				return
			}
		}
	}, nil
}

func (l *connLink) close() { _ = l.conn.Close() }

// idKey is a request id as a map key: the same id, however written.
func idKey(id jsonrpc.ID) string { return fmt.Sprintf("%T:%v", id.Raw(), id.Raw()) }

// tokenKey is a progress token as a map key, alike for a request's and
// its progress notifications'.
func tokenKey(raw json.RawMessage) string {
	var v any
	_ = json.Unmarshal(raw, &v)
	return fmt.Sprintf("%T:%v", v, v)
}
