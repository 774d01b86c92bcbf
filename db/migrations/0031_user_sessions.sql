-- Dashboard sessions a user can end: every session token carries the user's session version
-- (`sv`), and a session is valid only while it matches. Logging out and changing the password
-- move the version on, so every earlier session of that user is refused on its next request.
ALTER TABLE users ADD COLUMN session_version INTEGER NOT NULL DEFAULT 0;
