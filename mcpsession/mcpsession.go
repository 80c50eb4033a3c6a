// Package mcpsession holds MCP session records, so that a session opened
// on one wunder replica is served by any replica on the same database
// (docs/mcp.md, "Sessions across replicas"). A record is what a replica
// needs to take a session over: its id, the user that opened it, the
// route (/wunder/mcp or a pass-through upstream), the negotiated protocol
// version, the client's initialize params, and a little mutable state
// (the log level; the upstream session id of a pass-through session).
// Beside the records, the events of the sessions' response streams
// (Store.AppendMCPEvent, MCPEvents) let a client resume a stream with
// Last-Event-ID on a replica other than the one that wrote it.
//
// Package storage implements [Store] on SQLite and PostgreSQL; [NewMemStore]
// is the store of a single process. The contract every store passes is
// mcpsessiontest.RunStoreTests.
package mcpsession

import (
	"context"
	"encoding/json"
	"time"
)

// Session is one MCP session's record.
type Session struct {
	// ID is the Mcp-Session-Id, unique across replicas (crypto/rand).
	ID string
	// UserID is the user of the principal that opened the session; only
	// that user may use it. "" for a principal of no user (the API key,
	// the anonymous local operator), whose sessions any such caller may use.
	UserID string
	// Route is "" for /wunder/mcp, else the pass-through upstream's name.
	Route string
	// ProtocolVersion is the version initialize negotiated.
	ProtocolVersion string
	// InitParams are the client's initialize params, as sent (JSON).
	InitParams json.RawMessage
	// State is the session's mutable state (JSON), the front-end's own.
	State json.RawMessage
	// CreatedAt is when the session opened; UsedAt when a request last
	// used it (Store.TouchMCPSession), which its idle timeout counts from.
	CreatedAt, UsedAt time.Time
}

// MaxTrim bounds the records one TrimMCPSessions deletes: a cap applied
// at every new session has at most one record over it.
const MaxTrim = 100

// newer reports whether a sorts before b in TrimMCPSessions' order.
func newer(a, b *Session) bool {
	if !a.UsedAt.Equal(b.UsedAt) {
		return a.UsedAt.After(b.UsedAt)
	}
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return a.CreatedAt.After(b.CreatedAt)
	}
	return a.ID > b.ID
}

// Expired reports whether the session was idle for longer than ttl at now
// (ttl ≤ 0: never).
func (s *Session) Expired(now time.Time, ttl time.Duration) bool {
	return ttl > 0 && now.Sub(s.UsedAt) > ttl
}

// Event is one stored event of a session's stream.
type Event struct {
	// Index is the event's place in its stream, from 0.
	Index int
	// Data is the event's data (a JSON-RPC message; empty for the
	// priming event).
	Data []byte
}

// Store keeps the records and the streams' events. A session that is not
// found is orchestrator.ErrNotFound; closing a session deletes its record
// and its events, so that every replica finds it gone.
type Store interface {
	// CreateMCPSession stores a new record; an id that exists is
	// orchestrator.ErrConflict.
	CreateMCPSession(ctx context.Context, s *Session) error
	// MCPSession reads a record.
	MCPSession(ctx context.Context, id string) (*Session, error)
	// TouchMCPSession sets the record's UsedAt to at (never earlier than
	// it was).
	TouchMCPSession(ctx context.Context, id string, at time.Time) error
	// SetMCPSessionState replaces the record's State.
	SetMCPSessionState(ctx context.Context, id string, state json.RawMessage) error
	// CloseMCPSession deletes the record and its events; closing a session
	// that is not stored is not an error.
	CloseMCPSession(ctx context.Context, id string) error
	// PurgeMCPSessions deletes the records (and their events) not used
	// since before, and returns how many.
	PurgeMCPSessions(ctx context.Context, before time.Time) (int, error)
	// TrimMCPSessions deletes the records (and their events) of userID on
	// route beyond the keep most recently used (UsedAt, then CreatedAt,
	// then id, newest first), and returns their ids: at most
	// MaxTrim a call.
	TrimMCPSessions(ctx context.Context, userID, route string, keep int) ([]string, error)

	// AppendMCPEvent adds data as the next event of the stream (index one
	// past the stream's last, 0 for its first) and keeps no more than keep
	// of the stream's newest events (keep ≤ 0: all).
	AppendMCPEvent(ctx context.Context, sessionID, streamID string, data []byte, keep int) error
	// MCPEvents returns the stream's stored events after index, oldest
	// first; the oldest of them may be later than index+1 when older ones
	// were dropped (keep).
	MCPEvents(ctx context.Context, sessionID, streamID string, after int) ([]Event, error)
}
