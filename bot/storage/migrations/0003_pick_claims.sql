-- 3: a claim on a pick (who is sending it, until when), so two processes on one database
-- never both send the same server's post.
ALTER TABLE picks ADD COLUMN claim_owner TEXT;

ALTER TABLE picks ADD COLUMN claim_until TEXT;
