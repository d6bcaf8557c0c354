-- 9: fetching across machines (issue 25). One process fetches each source per refresh slot,
-- elected by a lease row (holder, expiry, fencing generation); what it fetched reaches every
-- other process through source_papers, numbered by a sequence per source (bot/sources/shared.py).
CREATE TABLE source_leases (
    source TEXT PRIMARY KEY,
    holder TEXT,
    lease_until TEXT,
    generation INTEGER NOT NULL DEFAULT 0,
    slot TEXT,
    done_slot TEXT,
    last_seq INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE source_papers (
    source TEXT NOT NULL,
    seq INTEGER NOT NULL,
    paper_id TEXT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (source, seq)
);

CREATE UNIQUE INDEX source_papers_paper ON source_papers (source, paper_id);
