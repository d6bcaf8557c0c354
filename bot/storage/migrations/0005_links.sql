-- 5: servers that asked for link replies (`/server links on`, bot/links): the bot answers
-- messages posting arXiv, OpenReview or DOI links with the papers, compactly. Off by default:
-- a server without a row has them off.
CREATE TABLE link_replies (
        guild_id INTEGER PRIMARY KEY,
        enabled INTEGER NOT NULL DEFAULT 0,
        updated_at TEXT NOT NULL);
