-- The lease table for PostgreSQL (15+). Replace redlock_leases with your table name.
-- One row per held (or expired, not yet cleaned) lease; the fencing tokens come from a sequence,
-- so deleting rows never resets them.
CREATE TABLE IF NOT EXISTS redlock_leases (
  resource      VARCHAR(255) PRIMARY KEY,
  owner         VARCHAR(64)  NOT NULL,
  fencing_token BIGINT       NOT NULL,
  expires_at    TIMESTAMPTZ(6) NOT NULL
);
CREATE INDEX IF NOT EXISTS redlock_leases_expires_at ON redlock_leases (expires_at);
CREATE SEQUENCE IF NOT EXISTS redlock_leases_fence;
