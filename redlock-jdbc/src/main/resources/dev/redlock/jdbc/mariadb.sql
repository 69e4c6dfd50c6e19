-- The lease table for MariaDB (10.11+). Replace redlock_leases with your table name.
-- One row per held (or expired, not yet cleaned) lease; the fencing tokens come from a sequence,
-- so deleting rows never resets them.
CREATE TABLE IF NOT EXISTS redlock_leases (
  resource      VARCHAR(255) NOT NULL PRIMARY KEY,
  owner         VARCHAR(64)  NOT NULL,
  fencing_token BIGINT       NOT NULL,
  expires_at    DATETIME(6)  NOT NULL, -- UTC (UTC_TIMESTAMP), whatever the session time zone
  INDEX redlock_leases_expires_at (expires_at)
) ENGINE = InnoDB;
CREATE SEQUENCE IF NOT EXISTS redlock_leases_fence;
