-- A run paused for approvals is now waiting_approval; waiting_input is the
-- pause for a person's answer to the run's question (docs/lifecycle.md).
-- Every run stored waiting so far waited for approvals.
UPDATE runs SET state = 'waiting_approval' WHERE state = 'waiting_input';
