-- The tool lists of upstream MCP servers (adapters/mcptools), so building a
-- prompt never needs the server. tools is the JSON array tools/list returned.
CREATE TABLE mcp_tool_specs (
    server     TEXT PRIMARY KEY,
    tools      TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
