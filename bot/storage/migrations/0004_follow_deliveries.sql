-- 4: each follow notice on its way to Discord (bot/follows): claimed before the send, confirmed
-- after it, retried with backoff after a failure; never lost, never sent twice.
CREATE TABLE follow_notices (
        batch_id TEXT PRIMARY KEY,
        follow_id TEXT NOT NULL,
        target TEXT NOT NULL,
        papers INTEGER NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending'
            CHECK (state IN ('pending', 'sending', 'sent', 'dropped')),
        attempts INTEGER NOT NULL DEFAULT 0,
        error TEXT,
        next_attempt_at TEXT,
        first_attempt_at TEXT,
        claim_owner TEXT,
        claim_until TEXT,
        message_id INTEGER,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        sent_at TEXT);

CREATE INDEX follow_notices_by_state ON follow_notices (state, target);

CREATE INDEX follow_notices_by_follow ON follow_notices (follow_id, state);
