-- 1: the paper of the day: schedules, each server's pool, its pick history; metadata.
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE schedules (
            guild_id INTEGER PRIMARY KEY,
            channel_id INTEGER NOT NULL,
            post_time TEXT NOT NULL,
            timezone TEXT NOT NULL,
            topic TEXT,
            enabled INTEGER NOT NULL DEFAULT 1,
            stopped_reason TEXT,
            start_date TEXT NOT NULL,
            updated_at TEXT NOT NULL);

CREATE TABLE pools (
            guild_id INTEGER PRIMARY KEY,
            seed INTEGER NOT NULL,
            epoch INTEGER NOT NULL DEFAULT 0);

CREATE TABLE picks (
            guild_id INTEGER NOT NULL,
            local_date TEXT NOT NULL,
            paper_id TEXT NOT NULL,
            epoch INTEGER NOT NULL,
            marker TEXT NOT NULL,
            state TEXT NOT NULL DEFAULT 'pending'
                CHECK (state IN ('pending', 'sending', 'sent', 'failed')),
            channel_id INTEGER,
            message_id INTEGER,
            attempts INTEGER NOT NULL DEFAULT 0,
            error TEXT,
            next_attempt_at TEXT,
            first_attempt_at TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            sent_at TEXT,
            PRIMARY KEY (guild_id, local_date));

CREATE INDEX picks_by_epoch ON picks (guild_id, epoch);

CREATE INDEX picks_by_state ON picks (guild_id, state);
