package storage

import (
	"context"
	"encoding/json"
	"time"

	"github.com/uptrace/bun"
)

// mcpSpecRow is an mcp_tool_specs row: one upstream MCP server's tool list.
type mcpSpecRow struct {
	bun.BaseModel `bun:"table:mcp_tool_specs"`

	Server    string    `bun:"server,pk"`
	Tools     string    `bun:"tools,notnull"`
	UpdatedAt time.Time `bun:"updated_at,notnull"`
}

// SaveMCPToolSpecs stores (replacing) a server's tool list, the JSON array
// tools/list returned. It implements adapters/mcptools.SpecCache.
func (s *Store) SaveMCPToolSpecs(ctx context.Context, server string, tools json.RawMessage) error {
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		var err error
		row := &mcpSpecRow{Server: server, Tools: string(tools), UpdatedAt: time.Now().UTC()}
		_, err = db.NewInsert().Model(row).
			On("CONFLICT (server) DO UPDATE").
			Set("tools = EXCLUDED.tools, updated_at = EXCLUDED.updated_at").
			Exec(ctx)
		return dbErr(err, "save mcp tool specs", "mcp server "+server)
	})
}

// LoadMCPToolSpecs returns a server's cached tool list and when it was
// saved; ErrNotFound if there is none.
func (s *Store) LoadMCPToolSpecs(ctx context.Context, server string) (json.RawMessage, time.Time, error) {
	row := new(mcpSpecRow)
	if err := s.db.NewSelect().Model(row).Where("server = ?", server).Scan(ctx); err != nil {
		return nil, time.Time{}, dbErr(err, "load mcp tool specs", "mcp server "+server)
	}
	return json.RawMessage(row.Tools), row.UpdatedAt, nil
}
