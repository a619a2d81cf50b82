#!/usr/bin/env python3
"""Where the gateway's writer spends an answer: the statements of `AcceptedRows.settle`
(Sources/DallyStore/Sync/AcceptedRows.swift, as of 2026-11-26) run on a synthetic replica
through the system SQLite, each timed, with the commits apart.

A replica of ROWS random-id rows, each pending in the outbox (the schema's parts that these
statements touch: the row table and its indexes, the outbox with its indexes and totals
triggers, the in-flight rows). Then NB batches of 5,000 rows are recorded in flight and
answered, 256-row pieces joined 16 to a transaction (as while no local write waits); BATCH and
JOIN change both.

Usage:  python3 tools/bench/answer_settle.py [ROWS]        (default 200000; ~1 min)
Env:    NB [10] batches answered; PER_MS [50] rows written in each millisecond (their first-dirty time); BATCH [5000] rows a batch; JOIN [16] pieces a transaction; PRAGMAS "a=b;c=d" run first (e.g. cache_size=-65536,
        wal_autocheckpoint=0); SKIP "name,name" statements left out (e.g. outbox_del);
        DROP "TRIGGER x" or "INDEX x" dropped before the run; CKTHREAD=1 checkpoints from a
        second connection instead of the writer; DIR [/tmp] where the database goes; AGES=1
        keeps the outbox's ages in `dally_outbox_ages` by triggers instead of the age index
        (as the replica's schema v10 does).
"""
import json, os, sqlite3, sys, threading, time, uuid

rows = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
batches = int(os.environ.get("NB", "10"))
batch_rows = int(os.environ.get("BATCH", "5000"))
joined = int(os.environ.get("JOIN", "16"))
path = os.path.join(os.environ.get("DIR", "/tmp"), "answer-settle.sqlite")
for suffix in ("", "-wal", "-shm"):
    if os.path.exists(path + suffix):
        os.remove(path + suffix)
db = sqlite3.connect(path, isolation_level=None)
for pragma in filter(None, os.environ.get("PRAGMAS", "").split(";")):
    db.execute("PRAGMA " + pragma)
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA synchronous=FULL")
db.executescript("""
CREATE TABLE t (id TEXT NOT NULL PRIMARY KEY, seq INTEGER NOT NULL, updated_at INTEGER NOT NULL,
    deleted INTEGER NOT NULL DEFAULT 0, version INTEGER, c_name TEXT, c_qty INTEGER, c_price REAL, c_paid INTEGER
) WITHOUT ROWID;
CREATE UNIQUE INDEX t_seq ON t(seq);
CREATE INDEX t_tombstones ON t(updated_at) WHERE deleted = 1;
CREATE TABLE dally_outbox (tbl TEXT NOT NULL, row_id TEXT NOT NULL, first_dirty_at INTEGER NOT NULL,
    last_write_at INTEGER NOT NULL, base_version INTEGER, writes INTEGER NOT NULL, parked TEXT,
    bytes INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (tbl, row_id)) WITHOUT ROWID;
CREATE TABLE dally_outbox_totals (tbl TEXT NOT NULL PRIMARY KEY, entries INTEGER NOT NULL, bytes INTEGER NOT NULL) WITHOUT ROWID;
CREATE TRIGGER dally_outbox_counted AFTER INSERT ON dally_outbox BEGIN
    INSERT INTO dally_outbox_totals (tbl, entries, bytes) VALUES (new.tbl, 1, new.bytes)
    ON CONFLICT(tbl) DO UPDATE SET entries = entries + 1, bytes = bytes + excluded.bytes;
END;
CREATE TRIGGER dally_outbox_uncounted AFTER DELETE ON dally_outbox BEGIN
    UPDATE dally_outbox_totals SET entries = entries - 1, bytes = bytes - old.bytes WHERE tbl = old.tbl;
END;
CREATE INDEX dally_outbox_age ON dally_outbox (tbl, first_dirty_at);
CREATE INDEX dally_outbox_parked ON dally_outbox (tbl) WHERE parked IS NOT NULL;
CREATE TABLE dally_inflight_rows (tbl TEXT NOT NULL, row_id TEXT NOT NULL, seq INTEGER NOT NULL, batch TEXT,
    PRIMARY KEY (tbl, row_id)) WITHOUT ROWID;
CREATE INDEX dally_inflight_rows_batch ON dally_inflight_rows (batch);
""")
ids = [str(uuid.uuid4()) for _ in range(rows)]
now = 1_795_670_000_000
per_ms = int(os.environ.get("PER_MS", "50"))
db.execute("BEGIN")
for i, row_id in enumerate(ids):
    db.execute("INSERT INTO t VALUES (?, ?, ?, 0, NULL, ?, ?, 2.5, 0)", (row_id, i + 1, now + i // per_ms, f"backlog {i}", i % 1000))
    db.execute("INSERT INTO dally_outbox (tbl, row_id, first_dirty_at, last_write_at, base_version, writes, bytes)"
               " VALUES ('bench', ?, ?, ?, NULL, 1, 60)", (row_id, now + i // per_ms, now + i // per_ms))
db.execute("COMMIT")
if os.environ.get("AGES"):
    db.executescript("""
DROP INDEX dally_outbox_age;
CREATE TABLE dally_outbox_ages (tbl TEXT NOT NULL, at INTEGER NOT NULL, entries INTEGER NOT NULL,
    PRIMARY KEY (tbl, at)) WITHOUT ROWID;
INSERT INTO dally_outbox_ages SELECT tbl, first_dirty_at, COUNT(*) FROM dally_outbox GROUP BY tbl, first_dirty_at;
CREATE TRIGGER dally_outbox_aged AFTER INSERT ON dally_outbox BEGIN
    INSERT INTO dally_outbox_ages (tbl, at, entries) VALUES (new.tbl, new.first_dirty_at, 1)
    ON CONFLICT(tbl, at) DO UPDATE SET entries = entries + 1;
END;
CREATE TRIGGER dally_outbox_unaged AFTER DELETE ON dally_outbox BEGIN
    DELETE FROM dally_outbox_ages WHERE tbl = old.tbl AND at = old.first_dirty_at AND entries = 1;
    UPDATE dally_outbox_ages SET entries = entries - 1 WHERE tbl = old.tbl AND at = old.first_dirty_at;
END;
CREATE TRIGGER dally_outbox_reaged AFTER UPDATE OF first_dirty_at ON dally_outbox
WHEN new.first_dirty_at <> old.first_dirty_at BEGIN
    DELETE FROM dally_outbox_ages WHERE tbl = old.tbl AND at = old.first_dirty_at AND entries = 1;
    UPDATE dally_outbox_ages SET entries = entries - 1 WHERE tbl = old.tbl AND at = old.first_dirty_at;
    INSERT INTO dally_outbox_ages (tbl, at, entries) VALUES (new.tbl, new.first_dirty_at, 1)
    ON CONFLICT(tbl, at) DO UPDATE SET entries = entries + 1;
END;
""")
for drop in filter(None, os.environ.get("DROP", "").split(",")):
    db.execute("DROP " + drop)

statements = [
    ("create", "CREATE TEMP TABLE IF NOT EXISTS dally_accepted (id TEXT NOT NULL PRIMARY KEY, version INTEGER NOT NULL,"
               " sent_seq INTEGER, unchanged INTEGER NOT NULL DEFAULT 0)", ()),
    ("clear", "DELETE FROM temp.dally_accepted", ()),
    ("insert", "INSERT INTO temp.dally_accepted (id, version) SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]')"
               " FROM json_each(?)", None),
    ("sent_seq", "UPDATE temp.dally_accepted SET sent_seq ="
                 " (SELECT r.seq FROM dally_inflight_rows r WHERE r.tbl = ? AND r.row_id = dally_accepted.id)", ("bench",)),
    ("drop_gone", "DELETE FROM temp.dally_accepted WHERE sent_seq IS NULL", ()),
    ("unchanged", "UPDATE temp.dally_accepted SET unchanged = IFNULL((SELECT t.seq FROM t WHERE t.id = dally_accepted.id) = sent_seq, 0)", ()),
    ("version", "UPDATE t SET version = (SELECT a.version FROM temp.dally_accepted a WHERE a.id = t.id)"
                " WHERE id IN (SELECT id FROM temp.dally_accepted WHERE unchanged)", ()),
    ("outbox_del", "DELETE FROM dally_outbox WHERE tbl = ? AND row_id IN (SELECT id FROM temp.dally_accepted WHERE unchanged)", ("bench",)),
    ("outbox_rebase", "UPDATE dally_outbox SET base_version = (SELECT a.version FROM temp.dally_accepted a WHERE a.id = dally_outbox.row_id),"
                      " first_dirty_at = MAX(first_dirty_at, ?) WHERE tbl = ? AND row_id IN (SELECT id FROM temp.dally_accepted WHERE NOT unchanged)",
     (now, "bench")),
    ("inflight_del", "DELETE FROM dally_inflight_rows WHERE tbl = ? AND row_id IN (SELECT id FROM temp.dally_accepted)", ("bench",)),
]
skipped = set(os.environ.get("SKIP", "").split(","))
spent = {name: 0.0 for name, _, _ in statements} | {"record": 0.0, "commit": 0.0}

done = False
def checkpoints():
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    while not done:
        time.sleep(0.02)
        other.execute("PRAGMA wal_checkpoint(PASSIVE)")
if os.environ.get("CKTHREAD"):
    db.execute("PRAGMA wal_autocheckpoint=0")
    checkpointer = threading.Thread(target=checkpoints)
    checkpointer.start()

order = sorted(ids) if os.environ.get("SORTED") else ids
seq_of = {row_id: i + 1 for i, row_id in enumerate(ids)}
start = time.perf_counter()
for b in range(batches):
    batch = order[b * batch_rows:(b + 1) * batch_rows]
    began = time.perf_counter()
    db.execute("BEGIN")
    db.executemany("INSERT INTO dally_inflight_rows (tbl, row_id, seq, batch) VALUES ('bench', ?, ?, ?)",
                   [(row_id, seq_of[row_id], f"b{b}") for row_id in batch])
    db.execute("COMMIT")
    spent["record"] += time.perf_counter() - began
    for group in range(0, len(batch), 256 * joined):
        db.execute("BEGIN")
        for piece in range(group, min(group + 256 * joined, len(batch)), 256):
            accepted = json.dumps([[row_id, 1000 + i] for i, row_id in enumerate(batch[piece:piece + 256])])
            for name, sql, arguments in statements:
                if name in skipped:
                    continue
                began = time.perf_counter()
                db.execute(sql, (accepted,) if arguments is None else arguments)
                spent[name] += time.perf_counter() - began
        began = time.perf_counter()
        db.execute("COMMIT")
        spent["commit"] += time.perf_counter() - began
elapsed = time.perf_counter() - start
done = True
if os.environ.get("CKTHREAD"):
    checkpointer.join()
answered = batches * batch_rows
print(f"RESULT answer_settle rows={rows} answered={answered} ms={elapsed * 1000:.0f} us_per_row={elapsed * 1e6 / answered:.1f}"
      f" wal_mb={os.path.getsize(path + '-wal') / 1e6:.1f}")
for name, seconds in spent.items():
    print(f"  {name:<14} {seconds * 1000:8.1f} ms  {seconds * 1e6 / answered:6.1f} us/row")
for suffix in ("", "-wal", "-shm"):
    if os.path.exists(path + suffix):
        os.remove(path + suffix)
