DROP INDEX IF EXISTS mcp_sessions_user_idx;
