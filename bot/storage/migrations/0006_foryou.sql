-- 7: For you (bot/foryou): what a member said about papers (👍 / 👎), how each of their feeds
-- is delivered (a follow's or the For you feed's frequency, cap, negative terms, minimum score),
-- and the one memory of which papers were already shown to them.
CREATE TABLE ratings (
        user_id INTEGER NOT NULL,
        paper_id TEXT NOT NULL,
        rating INTEGER NOT NULL CHECK (rating IN (-1, 1)),
        rated_at TEXT NOT NULL,
        PRIMARY KEY (user_id, paper_id));

CREATE TABLE feed_settings (
        feed_id TEXT PRIMARY KEY,
        user_id INTEGER NOT NULL,
        frequency TEXT NOT NULL DEFAULT 'refresh'
            CHECK (frequency IN ('refresh', 'daily', 'weekly')),
        at_time TEXT NOT NULL DEFAULT '09:00',
        weekday INTEGER NOT NULL DEFAULT 0 CHECK (weekday BETWEEN 0 AND 6),
        timezone TEXT NOT NULL DEFAULT 'UTC',
        cap INTEGER NOT NULL DEFAULT 5,
        exclude TEXT NOT NULL DEFAULT '',
        min_score REAL NOT NULL DEFAULT 0,
        updated_at TEXT NOT NULL);

CREATE INDEX feed_settings_by_user ON feed_settings (user_id);

CREATE TABLE shown (
        user_id INTEGER NOT NULL,
        paper_id TEXT NOT NULL,
        via TEXT NOT NULL,
        shown_at TEXT NOT NULL,
        PRIMARY KEY (user_id, paper_id));
