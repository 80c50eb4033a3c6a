DROP INDEX IF EXISTS tool_logs_created_idx;
