-- The monitor's tool usage reads the calls of a time window, newest first.
CREATE INDEX tool_logs_created_idx ON tool_logs (created_at);
