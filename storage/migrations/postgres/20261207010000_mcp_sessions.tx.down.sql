DROP TABLE IF EXISTS mcp_events;
DROP TABLE IF EXISTS mcp_sessions;
