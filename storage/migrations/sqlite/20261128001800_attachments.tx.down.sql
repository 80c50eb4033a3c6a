ALTER TABLE messages DROP COLUMN attachments;
