// The inbox's SQLite schema, versioned: a version row in `meta`, DDL applied only when the code's
// version is newer than the stored one. Append migrations; never edit a shipped one.
// No secondary indexes: on the free plan every index entry is a billed row write (docs/operations.md),
// and the tables scanned by the alarm stay small (acknowledged messages are deleted). A message's lane
// needs none either: the lanes' queued ids are held in memory (lane-index.ts), built by one scan per life
// of the object, and every send reads its row by primary key.

export const MIGRATIONS: readonly string[][] = [
  [
    `CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID`,
    `CREATE TABLE IF NOT EXISTS config (id INTEGER PRIMARY KEY CHECK (id = 1), json TEXT NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS messages (
       seq INTEGER PRIMARY KEY,
       kind TEXT NOT NULL,
       subpath TEXT,
       content_type TEXT NOT NULL,
       body BLOB NOT NULL,
       size INTEGER NOT NULL,
       received_at INTEGER NOT NULL,
       expires_at INTEGER NOT NULL,
       sender TEXT,
       msg_id TEXT,
       env_type TEXT
     )`,
    `CREATE TABLE IF NOT EXISTS dedup (
       sender TEXT NOT NULL,
       msg_id TEXT NOT NULL,
       fingerprint TEXT NOT NULL,
       answer TEXT NOT NULL,
       expires_at INTEGER NOT NULL,
       PRIMARY KEY (sender, msg_id)
     ) WITHOUT ROWID`,
    `CREATE TABLE IF NOT EXISTS outbox (
       id INTEGER PRIMARY KEY,
       target TEXT NOT NULL,
       body TEXT NOT NULL,
       attempts INTEGER NOT NULL,
       next_at INTEGER NOT NULL,
       expires_at INTEGER NOT NULL
     )`,
    `CREATE TABLE IF NOT EXISTS nonces (nonce TEXT PRIMARY KEY, expires_at INTEGER NOT NULL) WITHOUT ROWID`,
  ],
  // 2: message states. A row is queued until acknowledged (deleted) or dead (refused by the gateway,
  // or its TTL ended): dead rows keep their reason until replayed, dropped or past the dead TTL.
  // The id floor is brought up to date once, since version 1 saved it only when the queue emptied.
  [
    `ALTER TABLE messages ADD COLUMN state TEXT NOT NULL DEFAULT 'queued'`,
    `ALTER TABLE messages ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0`,
    `ALTER TABLE messages ADD COLUMN reason TEXT`,
    `ALTER TABLE messages ADD COLUMN last_status INTEGER`,
    `ALTER TABLE messages ADD COLUMN dead_at INTEGER`,
    `ALTER TABLE messages ADD COLUMN replay_of INTEGER`,
    `INSERT OR REPLACE INTO meta (key, value)
       SELECT 'seq_floor', CAST(max(m) AS TEXT) FROM (
         SELECT coalesce(max(seq), 0) AS m FROM messages
         UNION ALL SELECT coalesce(max(CAST(value AS INTEGER)), 0) FROM meta WHERE key = 'seq_floor')`,
  ],
  // 3: acks owed to sibling inboxes (sibling-receipts.ts), kept in the dedup record written anyway:
  // relay_ack is the message's id when its ack is owed, acks_through the cursor when it was written.
  [
    `ALTER TABLE dedup ADD COLUMN relay_ack INTEGER`,
    `ALTER TABLE dedup ADD COLUMN acks_through INTEGER`,
  ],
  // 4: webhook sources (sources/source-book.ts), and the headers of interest a source event keeps
  // with its body (JSON; null for everything else).
  [
    `CREATE TABLE IF NOT EXISTS sources (name TEXT PRIMARY KEY, json TEXT NOT NULL) WITHOUT ROWID`,
    `ALTER TABLE messages ADD COLUMN headers TEXT`,
  ],
  // 5: what a source event's request looked like (protocol/forward.ts StoredRequest as JSON: method, the
  // token URL's tail, the sender's headers), so a source with a forward target can post it to a local app
  // as it came; null for everything else, and for events stored before.
  [`ALTER TABLE messages ADD COLUMN request TEXT`],
  // 6: the outbox's target typed: `kind` ('hub' or 'relay') beside the address in `target` (the hub's
  // URL, the sibling inbox's agent id). Rows written before kept a "hub:"/"relay:" prefix in `target`.
  [
    `ALTER TABLE outbox ADD COLUMN kind TEXT NOT NULL DEFAULT 'relay'`,
    `UPDATE outbox SET kind = 'hub', target = substr(target, 5) WHERE substr(target, 1, 4) = 'hub:'`,
    `UPDATE outbox SET target = substr(target, 7) WHERE substr(target, 1, 6) = 'relay:'`,
  ],
  // 7: lanes (protocol/lanes.ts). `lane` is decided at intake (message-lane.ts); rows stored before have
  // NULL, computed from the row when first needed and written back. `restored` marks a message an older
  // agent had set aside to the dead shelf and a lanes agent's connection put back: no `after` cursor
  // deletes it (its id is below any such cursor), only its own ack.
  [
    `ALTER TABLE messages ADD COLUMN lane TEXT`,
    `ALTER TABLE messages ADD COLUMN restored INTEGER NOT NULL DEFAULT 0`,
  ],
  // 8: live requests (worker/live/). live_log is a ring of the last LIVE_LOG_KEPT requests: `slot` is
  // `n` modulo the ring's size, so a request is one row write (an INSERT OR REPLACE), never a delete too.
  // a2a holds the A2A settings ('settings') and the Agent Card last fetched ('card'), JSON each.
  [
    `CREATE TABLE IF NOT EXISTS live_log (
       slot INTEGER PRIMARY KEY,
       n INTEGER NOT NULL,
       at_ms INTEGER NOT NULL,
       source TEXT NOT NULL,
       method TEXT NOT NULL,
       path TEXT NOT NULL,
       status INTEGER,
       duration_ms INTEGER NOT NULL,
       outcome TEXT NOT NULL,
       code TEXT
     )`,
    `CREATE TABLE IF NOT EXISTS a2a (key TEXT PRIMARY KEY, json TEXT NOT NULL) WITHOUT ROWID`,
  ],
  // 9: the outbox's records (worker/outbox/): one row per message the inbox's agent sent, keyed by its
  // msg_id (the agent's own: unique), so a receipt finds its record by primary key with no index to write.
  // `seq` orders the listing; the table is bounded (outbox-store.ts: OUTBOX_KEPT, OUTBOX_RETENTION_MS).
  // Not the `outbox` table above, which holds receipts this inbox still has to post.
  [
    `CREATE TABLE IF NOT EXISTS outbox_records (
       msg_id TEXT PRIMARY KEY,
       seq INTEGER NOT NULL,
       to_agent TEXT NOT NULL,
       type TEXT NOT NULL,
       reply_to TEXT,
       topic TEXT,
       created_at INTEGER NOT NULL,
       state TEXT NOT NULL,
       receipt_type TEXT,
       receipt_msg_id TEXT,
       receipt_at INTEGER,
       error_code TEXT,
       error_message TEXT
     ) WITHOUT ROWID`,
  ],
  // 10: history (history-store.ts). A delivered message moves, in the statement pair that acknowledges
  // it, from `messages` into the table of the day it was acknowledged, h_<yyyymmdd> (UTC), created on
  // first use with the columns of `messages` (HISTORY_TABLE_COLUMNS: a migration that adds a column to
  // `messages` adds it to every h_ table listed here too); a whole day is let go of by DROP TABLE, not a
  // delete per message. history_days lists those tables; `n`, `bytes` and `max_seq` are counted once
  // the day is over. `epoch` names this inbox's storage in history cursors: a new storage, a new epoch.
  [
    `CREATE TABLE IF NOT EXISTS history_days (day TEXT PRIMARY KEY, n INTEGER, bytes INTEGER, max_seq INTEGER) WITHOUT ROWID`,
    `INSERT OR IGNORE INTO meta (key, value) VALUES ('epoch', lower(hex(randomblob(8))))`,
  ],
];

export const SCHEMA_VERSION = MIGRATIONS.length;
