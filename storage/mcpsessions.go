package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/wunder/wunder/mcpsession"
)

// The MCP session records and their streams' events (package mcpsession):
// tables mcp_sessions and mcp_events. A session's events are deleted with
// it; an append keeps a stream to its newest events.

var _ mcpsession.Store = (*Store)(nil)

type mcpSessionRow struct {
	bun.BaseModel `bun:"table:mcp_sessions"`

	ID              string    `bun:"id,pk"`
	UserID          string    `bun:"user_id,notnull"`
	Route           string    `bun:"route,notnull"`
	ProtocolVersion string    `bun:"protocol_version,notnull"`
	InitParams      string    `bun:"init_params,notnull"`
	State           string    `bun:"state,notnull"`
	CreatedAt       time.Time `bun:"created_at,notnull"`
	UsedAt          time.Time `bun:"used_at,notnull"`
}

type mcpEventRow struct {
	bun.BaseModel `bun:"table:mcp_events"`

	SessionID string `bun:"session_id,pk"`
	StreamID  string `bun:"stream_id,pk"`
	Idx       int    `bun:"idx,pk"`
	Data      string `bun:"data,notnull"`
}

func mcpJSON(b json.RawMessage) string {
	if len(b) == 0 {
		return "null"
	}
	return string(b)
}

// CreateMCPSession implements mcpsession.Store.
func (s *Store) CreateMCPSession(ctx context.Context, m *mcpsession.Session) error {
	row := &mcpSessionRow{ID: m.ID, UserID: m.UserID, Route: m.Route, ProtocolVersion: m.ProtocolVersion,
		InitParams: mcpJSON(m.InitParams), State: mcpJSON(m.State), CreatedAt: stamp(m.CreatedAt), UsedAt: stamp(m.UsedAt)}
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		_, err := db.NewInsert().Model(row).Exec(ctx)
		return dbErr(err, "create", "MCP session "+m.ID)
	})
}

// MCPSession implements mcpsession.Store.
func (s *Store) MCPSession(ctx context.Context, id string) (*mcpsession.Session, error) {
	row := new(mcpSessionRow)
	if err := s.db.NewSelect().Model(row).Where("id = ?", id).Scan(ctx); err != nil {
		return nil, dbErr(err, "read", "MCP session "+id)
	}
	return &mcpsession.Session{ID: row.ID, UserID: row.UserID, Route: row.Route, ProtocolVersion: row.ProtocolVersion,
		InitParams: json.RawMessage(row.InitParams), State: json.RawMessage(row.State),
		CreatedAt: row.CreatedAt.UTC(), UsedAt: row.UsedAt.UTC()}, nil
}

// TouchMCPSession implements mcpsession.Store.
func (s *Store) TouchMCPSession(ctx context.Context, id string, at time.Time) error {
	at = stamp(at)
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		res, err := db.NewUpdate().Model((*mcpSessionRow)(nil)).
			Set("used_at = CASE WHEN used_at < ? THEN ? ELSE used_at END", at, at).Where("id = ?", id).Exec(ctx)
		return affected(res, err, "touch", "MCP session "+id)
	})
}

// SetMCPSessionState implements mcpsession.Store.
func (s *Store) SetMCPSessionState(ctx context.Context, id string, state json.RawMessage) error {
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		res, err := db.NewUpdate().Model((*mcpSessionRow)(nil)).Set("state = ?", mcpJSON(state)).Where("id = ?", id).Exec(ctx)
		return affected(res, err, "update", "MCP session "+id)
	})
}

// CloseMCPSession implements mcpsession.Store.
func (s *Store) CloseMCPSession(ctx context.Context, id string) error {
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		if _, err := db.NewDelete().Model((*mcpEventRow)(nil)).Where("session_id = ?", id).Exec(ctx); err != nil {
			return dbErr(err, "delete the events of", "MCP session "+id)
		}
		_, err := db.NewDelete().Model((*mcpSessionRow)(nil)).Where("id = ?", id).Exec(ctx)
		return dbErr(err, "delete", "MCP session "+id)
	})
}

// PurgeMCPSessions implements mcpsession.Store.
func (s *Store) PurgeMCPSessions(ctx context.Context, before time.Time) (int, error) {
	before = stamp(before)
	var n int64
	err := s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		idle := db.NewSelect().Model((*mcpSessionRow)(nil)).Column("id").Where("used_at < ?", before)
		if _, err := db.NewDelete().Model((*mcpEventRow)(nil)).Where("session_id IN (?)", idle).Exec(ctx); err != nil {
			return dbErr(err, "purge the events of", "idle MCP sessions")
		}
		res, err := db.NewDelete().Model((*mcpSessionRow)(nil)).Where("used_at < ?", before).Exec(ctx)
		if err != nil {
			return dbErr(err, "purge", "idle MCP sessions")
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

// TrimMCPSessions implements mcpsession.Store.
func (s *Store) TrimMCPSessions(ctx context.Context, userID, route string, keep int) ([]string, error) {
	var ids []string
	err := s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		ids = ids[:0] // the writer may run fn again
		err := db.NewSelect().Model((*mcpSessionRow)(nil)).Column("id").
			Where("user_id = ? AND route = ?", userID, route).
			OrderExpr("used_at DESC, created_at DESC, id DESC").
			Limit(mcpsession.MaxTrim).Offset(int64(max(keep, 0))).Scan(ctx, &ids)
		if err != nil || len(ids) == 0 {
			return dbErr(err, "read", "the MCP sessions of "+userID)
		}
		if _, err := db.NewDelete().Model((*mcpEventRow)(nil)).Where("session_id IN (?)", bun.List(ids)).Exec(ctx); err != nil {
			return dbErr(err, "delete the events of", "MCP sessions over the cap")
		}
		_, err = db.NewDelete().Model((*mcpSessionRow)(nil)).Where("id IN (?)", bun.List(ids)).Exec(ctx)
		return dbErr(err, "delete", "MCP sessions over the cap")
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// AppendMCPEvent implements mcpsession.Store. One replica writes a stream
// (the one serving its request), so computing the next index in the
// insert cannot race with another writer of the stream.
func (s *Store) AppendMCPEvent(ctx context.Context, sessionID, streamID string, data []byte, keep int) error {
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		var next int
		err := db.NewSelect().Model((*mcpEventRow)(nil)).ColumnExpr("COALESCE(MAX(idx) + 1, 0)").
			Where("session_id = ? AND stream_id = ?", sessionID, streamID).Scan(ctx, &next)
		if err != nil {
			return dbErr(err, "append to", "MCP stream")
		}
		row := &mcpEventRow{SessionID: sessionID, StreamID: streamID, Idx: next, Data: string(data)}
		if _, err := db.NewInsert().Model(row).Exec(ctx); err != nil {
			return dbErr(err, "append to", "MCP stream")
		}
		if keep > 0 && next >= keep {
			_, err := db.NewDelete().Model((*mcpEventRow)(nil)).
				Where("session_id = ? AND stream_id = ? AND idx <= ?", sessionID, streamID, next-keep).Exec(ctx)
			if err != nil {
				return fmt.Errorf("storage: trim MCP stream: %w", err)
			}
		}
		return nil
	})
}

// MCPEvents implements mcpsession.Store.
func (s *Store) MCPEvents(ctx context.Context, sessionID, streamID string, after int) ([]mcpsession.Event, error) {
	var rows []mcpEventRow
	err := s.db.NewSelect().Model(&rows).Where("session_id = ? AND stream_id = ? AND idx > ?", sessionID, streamID, after).
		OrderExpr("idx ASC").Scan(ctx)
	if err != nil {
		return nil, dbErr(err, "read", "MCP stream")
	}
	out := make([]mcpsession.Event, len(rows))
	for i, r := range rows {
		out[i] = mcpsession.Event{Index: r.Idx, Data: []byte(r.Data)}
	}
	return out, nil
}
