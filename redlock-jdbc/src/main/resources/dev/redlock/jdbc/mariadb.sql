-- The lease table for MariaDB (10.11+). Replace redlock_leases with your table name.
-- One row per held (or expired, not yet cleaned) lease; the fencing tokens come from a sequence,
-- so deleting rows never resets them.
CREATE TABLE IF NOT EXISTS redlock_leases (
  -- Binary collations: resources are case-sensitive (as in Redis and PostgreSQL), and an owner
  -- token matches only itself.
  resource      VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY,
  owner         VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  fencing_token BIGINT       NOT NULL,
  expires_at    DATETIME(6)  NOT NULL, -- UTC (UTC_TIMESTAMP), whatever the session time zone
  INDEX redlock_leases_expires_at (expires_at)
) ENGINE = InnoDB;
CREATE SEQUENCE IF NOT EXISTS redlock_leases_fence;
