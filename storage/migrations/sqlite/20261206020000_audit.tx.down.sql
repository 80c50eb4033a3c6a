DROP INDEX IF EXISTS tool_logs_user_created_idx;
ALTER TABLE tool_logs DROP COLUMN reason;
ALTER TABLE tool_logs DROP COLUMN outcome;
ALTER TABLE tool_logs DROP COLUMN via;
ALTER TABLE tool_logs DROP COLUMN front_end;
