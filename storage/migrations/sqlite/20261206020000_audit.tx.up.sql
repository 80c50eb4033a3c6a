-- The tool log is the audit log (orchestrator/policy.go): every decision
-- on a tool call, allowed, denied or error, with the front-end and the path
-- (run, catalog, passthrough) it came by, and why when it was refused.
ALTER TABLE tool_logs ADD COLUMN front_end TEXT NOT NULL DEFAULT '';
ALTER TABLE tool_logs ADD COLUMN via TEXT NOT NULL DEFAULT '';
ALTER TABLE tool_logs ADD COLUMN outcome TEXT NOT NULL DEFAULT '';
ALTER TABLE tool_logs ADD COLUMN reason TEXT NOT NULL DEFAULT '';
UPDATE tool_logs SET via = CASE WHEN run_id = '' THEN 'catalog' ELSE 'run' END,
    outcome = CASE WHEN is_error THEN 'error' ELSE 'allowed' END;
-- GET /wunder/admin/audit?user_id=... reads one user's calls, newest first.
CREATE INDEX tool_logs_user_created_idx ON tool_logs (user_id, created_at);
