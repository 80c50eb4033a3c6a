-- The instance executing a run (orchestrator Options.InstanceID). It fences
-- the run's writes: a reaper that takes over the run of a dead instance
-- claims it by changing the owner, and the dead instance's late writes then
-- match no row. Locks are released by owner when such a run is reaped.
ALTER TABLE runs ADD COLUMN owner TEXT NOT NULL DEFAULT '';
CREATE INDEX session_locks_owner_idx ON session_locks (owner);
-- What the run was asked besides its question (tools, model, mode,
-- language, caller, rounds), as JSON, so a run interrupted by a crash can
-- be resumed (concurrency.resume_interrupted).
ALTER TABLE runs ADD COLUMN spec TEXT;
