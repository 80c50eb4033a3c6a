-- Attachments stored with the question's message (issue 14,
-- docs/attachments.md): a JSON array of {type, name, mime_type, content,
-- size}, NULL when there are none.
ALTER TABLE messages ADD COLUMN attachments TEXT;
