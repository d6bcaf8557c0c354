-- 2: readers' libraries, server preferences, reactions (bot/library); topic follows and
-- what each was told (bot/follows).
CREATE TABLE saved (
        user_id INTEGER NOT NULL,
        paper_id TEXT NOT NULL,
        guild_id INTEGER,
        saved_at TEXT NOT NULL,
        read_at TEXT,
        PRIMARY KEY (user_id, paper_id));

CREATE INDEX saved_by_guild ON saved (guild_id, saved_at);

CREATE TABLE guild_prefs (
        guild_id INTEGER PRIMARY KEY,
        default_venue TEXT,
        updated_at TEXT NOT NULL);

CREATE TABLE reactions (
        guild_id INTEGER NOT NULL,
        message_id INTEGER NOT NULL,
        paper_id TEXT NOT NULL,
        user_id INTEGER NOT NULL,
        emoji TEXT NOT NULL,
        reacted_at TEXT NOT NULL,
        PRIMARY KEY (message_id, user_id, emoji));

CREATE INDEX reactions_by_guild ON reactions (guild_id, reacted_at);

CREATE TABLE follows (
        follow_id TEXT PRIMARY KEY,
        user_id INTEGER NOT NULL,
        guild_id INTEGER,
        channel_id INTEGER,
        query TEXT NOT NULL,
        created_at TEXT NOT NULL,
        disabled_reason TEXT);

CREATE INDEX follows_by_user ON follows (user_id);

CREATE INDEX follows_by_guild ON follows (guild_id);

CREATE TABLE deliveries (
        target TEXT NOT NULL,
        paper_id TEXT NOT NULL,
        follow_id TEXT NOT NULL,
        batch_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        sent_at TEXT NOT NULL,
        PRIMARY KEY (target, paper_id));

CREATE INDEX deliveries_by_batch ON deliveries (batch_id, position);

CREATE TABLE corpus_papers (paper_id TEXT PRIMARY KEY, added_at TEXT NOT NULL);
