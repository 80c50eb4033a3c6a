-- Each user keeps at most mcp.server.max_sessions_per_user sessions per
-- route: a new one ends the least recently used beyond it
-- (Store.TrimMCPSessions), read by this index.
CREATE INDEX mcp_sessions_user_idx ON mcp_sessions (user_id, route, used_at);
