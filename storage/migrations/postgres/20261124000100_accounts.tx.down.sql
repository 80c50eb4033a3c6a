DROP TABLE IF EXISTS auth_tokens;
ALTER TABLE users DROP COLUMN updated_at;
ALTER TABLE users DROP COLUMN tool_access;
ALTER TABLE users DROP COLUMN disabled;
ALTER TABLE users DROP COLUMN roles;
ALTER TABLE users DROP COLUMN password_hash;
ALTER TABLE users DROP COLUMN display_name;
