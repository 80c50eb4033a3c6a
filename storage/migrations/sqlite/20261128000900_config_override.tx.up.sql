-- The admin API's configuration changes when replicas share the database:
-- one row, the changed sections as a JSON object, and its revision.
CREATE TABLE config_override (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    revision   BIGINT NOT NULL,
    sections   TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
