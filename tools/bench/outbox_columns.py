#!/usr/bin/env python3
"""What the outbox as columns of the row table would save the gateway in a drain: the
replica's SQL for a backlog of ROWS pending rows, written, batched, recorded in flight and
settled, on two schemas built from the same ids, in alternating rounds, through the system
SQLite.

- `v12`: the replica as it is (Sources/DallyStore/ReplicaSchema.swift, schema v12, 2026-11-27):
  the row table, `dally_outbox` with its totals, ages and in-flight mirror triggers (the delete
  ones standing aside while a settle runs), `dally_inflight_rows`; the statements of
  `ReplicaStore.nextBatch` (plan and record) and `AcceptedRows.settle`.
- `marked`: a prototype, not the replica: the in-flight mark as a column of the outbox entry
  (`flight`), no `dally_inflight_rows` and no mirror triggers; a batch keeps the highest
  sequence number it sent (a row is unchanged since while its number is not above it). What
  it leaves open: `/stats` counts the entries in flight from `dally_inflight_rows` (with their
  mirrored times and bytes) and would need an index on the mark, or per-batch totals, instead.
- `columns`: a prototype, not the replica: the outbox entry (first-dirty time, base version,
  writes, bytes, parked) and the in-flight mark (batch, sequence number sent) are columns of the
  row table, pending rows found by a partial index; no triggers (a write keeps the totals and
  ages itself), no second B-tree.

Each round times, in CPU-free wall seconds of the statements alone (no HTTP, no encoding): the
local writes that made the backlog (one transaction of WRITE rows each, as the batch route
does), and then the drain: batches of BATCH rows planned in id order, recorded, and answered
in 256-row pieces joined to a transaction (as while no local write waits). Prints µs a row per
step and the totals.

Usage:  python3 tools/bench/outbox_columns.py [ROWS]       (default 100000; ~1 min)
Env:    ROUNDS [3] BATCH [5000] WRITE [5000] DIR [/tmp]
"""
import json, os, sqlite3, sys, time, uuid

rows = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
rounds = int(os.environ.get("ROUNDS", "3"))
batch_rows = int(os.environ.get("BATCH", "5000"))
write_rows = int(os.environ.get("WRITE", "5000"))
piece, joined = 256, 64
directory = os.environ.get("DIR", "/tmp")
ids = [str(uuid.uuid4()) for _ in range(rows)]
NOW = 1_795_670_000_000

ROW_TABLE = """CREATE TABLE t_bench (id TEXT NOT NULL PRIMARY KEY, seq INTEGER NOT NULL, updated_at INTEGER NOT NULL,
    deleted INTEGER NOT NULL DEFAULT 0, version INTEGER, c_name TEXT, c_qty INTEGER, c_price REAL, c_paid INTEGER{extra}
) WITHOUT ROWID;
CREATE UNIQUE INDEX t_bench_seq ON t_bench(seq);
CREATE INDEX t_bench_tombstones ON t_bench(updated_at) WHERE deleted = 1;
CREATE TABLE dally_outbox_totals (tbl TEXT NOT NULL PRIMARY KEY, entries INTEGER NOT NULL, bytes INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE dally_outbox_ages (tbl TEXT NOT NULL, at INTEGER NOT NULL, entries INTEGER NOT NULL, PRIMARY KEY (tbl, at)) WITHOUT ROWID;
CREATE TABLE dally_inflight (batch TEXT NOT NULL PRIMARY KEY, created_at INTEGER NOT NULL, body BLOB NOT NULL,
    uploads TEXT, pulls TEXT) WITHOUT ROWID;
"""

V12 = ROW_TABLE.format(extra="") + """
CREATE TABLE dally_outbox (tbl TEXT NOT NULL, row_id TEXT NOT NULL, first_dirty_at INTEGER NOT NULL,
    last_write_at INTEGER NOT NULL, base_version INTEGER, writes INTEGER NOT NULL, parked TEXT,
    bytes INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (tbl, row_id)) WITHOUT ROWID;
CREATE INDEX dally_outbox_parked ON dally_outbox (tbl) WHERE parked IS NOT NULL;
CREATE TABLE dally_inflight_rows (tbl TEXT NOT NULL, row_id TEXT NOT NULL, seq INTEGER NOT NULL, batch TEXT,
    at INTEGER, bytes INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (tbl, row_id)) WITHOUT ROWID;
CREATE TABLE dally_outbox_settling (tbl TEXT NOT NULL PRIMARY KEY) WITHOUT ROWID;
CREATE TRIGGER dally_outbox_counted AFTER INSERT ON dally_outbox BEGIN
    INSERT INTO dally_outbox_totals (tbl, entries, bytes) VALUES (new.tbl, 1, new.bytes)
    ON CONFLICT(tbl) DO UPDATE SET entries = entries + 1, bytes = bytes + excluded.bytes;
END;
CREATE TRIGGER dally_outbox_resized AFTER UPDATE OF bytes ON dally_outbox WHEN new.bytes <> old.bytes BEGIN
    UPDATE dally_outbox_totals SET bytes = bytes + new.bytes - old.bytes WHERE tbl = new.tbl;
END;
CREATE TRIGGER dally_outbox_aged AFTER INSERT ON dally_outbox BEGIN
    INSERT INTO dally_outbox_ages (tbl, at, entries) VALUES (new.tbl, new.first_dirty_at, 1)
    ON CONFLICT(tbl, at) DO UPDATE SET entries = entries + 1;
END;
CREATE TRIGGER dally_outbox_flight_entered AFTER INSERT ON dally_outbox BEGIN
    UPDATE dally_inflight_rows SET at = new.first_dirty_at, bytes = new.bytes WHERE tbl = new.tbl AND row_id = new.row_id;
END;
CREATE TRIGGER dally_outbox_uncounted AFTER DELETE ON dally_outbox WHEN NOT EXISTS (SELECT 1 FROM dally_outbox_settling) BEGIN
    UPDATE dally_outbox_totals SET entries = entries - 1, bytes = bytes - old.bytes WHERE tbl = old.tbl;
END;
CREATE TRIGGER dally_outbox_unaged AFTER DELETE ON dally_outbox WHEN NOT EXISTS (SELECT 1 FROM dally_outbox_settling) BEGIN
    DELETE FROM dally_outbox_ages WHERE tbl = old.tbl AND at = old.first_dirty_at AND entries = 1;
    UPDATE dally_outbox_ages SET entries = entries - 1 WHERE tbl = old.tbl AND at = old.first_dirty_at;
END;
CREATE TRIGGER dally_outbox_flight_left AFTER DELETE ON dally_outbox WHEN NOT EXISTS (SELECT 1 FROM dally_outbox_settling) BEGIN
    UPDATE dally_inflight_rows SET at = NULL, bytes = 0 WHERE tbl = old.tbl AND row_id = old.row_id;
END;
"""

# The in-flight mark as a column of the outbox entry (`flight`: the batch), no per-row table
# and no mirror triggers; a batch keeps the highest sequence number it sent (a row is unchanged
# since while its sequence number is not above it), and a settle reads each entry's time and
# bytes from the entry it deletes.
MARKED = V12[:V12.index("CREATE TABLE dally_inflight_rows")] + V12[V12.index("CREATE TABLE dally_outbox_settling"):]
MARKED = MARKED.replace("bytes INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (tbl, row_id)) WITHOUT ROWID;",
    "bytes INTEGER NOT NULL DEFAULT 0, flight TEXT, PRIMARY KEY (tbl, row_id)) WITHOUT ROWID;", 1)
for trigger in ("dally_outbox_flight_entered", "dally_outbox_flight_left"):
    start = MARKED.index(f"CREATE TRIGGER {trigger}")
    MARKED = MARKED[:start] + MARKED[MARKED.index("END;", start) + len("END;\n"):]

COLUMNS = ROW_TABLE.format(extra=""",
    pending_at INTEGER, base_version INTEGER, writes INTEGER, bytes INTEGER, parked TEXT, flight TEXT, sent_seq INTEGER""") + """
CREATE INDEX t_bench_pending ON t_bench(id) WHERE pending_at IS NOT NULL;
"""

SCRATCH = """CREATE TEMP TABLE dally_accepted (id TEXT NOT NULL PRIMARY KEY, version INTEGER NOT NULL, at INTEGER,
    bytes INTEGER, unchanged INTEGER NOT NULL DEFAULT 0)"""

AGES_SETTLED = [
    """UPDATE dally_outbox_totals SET
        entries = entries - (SELECT COUNT(*) FROM temp.dally_accepted WHERE unchanged AND at IS NOT NULL),
        bytes = bytes - (SELECT TOTAL(bytes) FROM temp.dally_accepted WHERE unchanged AND at IS NOT NULL)
        WHERE tbl = 'bench'""",
    """UPDATE dally_outbox_ages SET entries = dally_outbox_ages.entries - gone.leaving
        FROM (SELECT at, COUNT(*) AS leaving FROM temp.dally_accepted WHERE unchanged AND at IS NOT NULL GROUP BY at) AS gone
        WHERE dally_outbox_ages.tbl = 'bench' AND dally_outbox_ages.at = gone.at""",
    """DELETE FROM dally_outbox_ages WHERE tbl = 'bench' AND entries <= 0
        AND at IN (SELECT at FROM temp.dally_accepted WHERE unchanged AND at IS NOT NULL)""",
]


class V12Schema:
    name, schema = "v12", V12

    def write(self, db, chunk, seq, now):
        for i, row_id in enumerate(chunk):
            db.execute("INSERT INTO t_bench VALUES (?, ?, ?, 0, NULL, ?, ?, 2.5, 0)", (row_id, seq + i, now, f"backlog {i}", i % 1000))
            db.execute("""INSERT INTO dally_outbox (tbl, row_id, first_dirty_at, last_write_at, base_version, writes, bytes)
                VALUES ('bench', ?, ?, ?, NULL, 1, 80) ON CONFLICT(tbl, row_id) DO UPDATE SET
                last_write_at = excluded.last_write_at, writes = writes + 1, bytes = excluded.bytes""", (row_id, now, now))

    def plan(self, db, cursor):
        return db.execute("""SELECT o.base_version, t.id, t.seq, t.updated_at, t.deleted, t.c_name, t.c_qty, t.c_price, t.c_paid
            FROM dally_outbox o JOIN t_bench t ON t.id = o.row_id
            WHERE o.tbl = 'bench' AND o.row_id > ? AND o.parked IS NULL
                AND NOT EXISTS (SELECT 1 FROM dally_inflight_rows r WHERE r.tbl = o.tbl AND r.row_id = o.row_id)
            ORDER BY o.row_id LIMIT ?""", (cursor, batch_rows)).fetchall()

    def record(self, db, batch, sent):
        db.execute("""INSERT INTO dally_inflight_rows (tbl, row_id, seq, batch, at, bytes)
            SELECT j.tbl, j.row_id, j.seq, ?, o.first_dirty_at, IFNULL(o.bytes, 0)
            FROM (SELECT json_extract(value, '$[0]') AS tbl, json_extract(value, '$[1]') AS row_id,
                json_extract(value, '$[2]') AS seq FROM json_each(?)) j
            LEFT JOIN dally_outbox o ON o.tbl = j.tbl AND o.row_id = j.row_id""",
            (batch, json.dumps([["bench", row_id, seq] for row_id, seq in sent])))

    def settle(self, db, batch, accepted):
        steps = [
            ("DELETE FROM temp.dally_accepted", ()),
            ("""INSERT INTO temp.dally_accepted (id, version, at, bytes, unchanged)
                SELECT r.row_id, json_extract(j.value, '$[1]'), r.at, r.bytes, IFNULL(t.seq = r.seq, 0)
                FROM json_each(?) AS j
                CROSS JOIN dally_inflight_rows AS r ON r.tbl = 'bench' AND r.row_id = json_extract(j.value, '$[0]')
                LEFT JOIN t_bench AS t ON t.id = r.row_id""", (json.dumps(accepted),)),
            ("UPDATE t_bench SET version = a.version FROM temp.dally_accepted AS a WHERE a.unchanged AND t_bench.id = a.id", ()),
            ("DELETE FROM dally_inflight_rows WHERE tbl = 'bench' AND row_id IN (SELECT id FROM temp.dally_accepted)", ()),
            ("INSERT INTO dally_outbox_settling (tbl) VALUES ('bench')", ()),
            *[(sql, ()) for sql in AGES_SETTLED],
            ("DELETE FROM dally_outbox WHERE tbl = 'bench' AND row_id IN (SELECT id FROM temp.dally_accepted WHERE unchanged)", ()),
            ("DELETE FROM dally_outbox_settling", ()),
            ("""UPDATE dally_outbox SET base_version = (SELECT a.version FROM temp.dally_accepted a WHERE a.id = dally_outbox.row_id),
                first_dirty_at = MAX(first_dirty_at, 0)
                WHERE tbl = 'bench' AND row_id IN (SELECT id FROM temp.dally_accepted WHERE NOT unchanged)""", ()),
        ]
        for sql, arguments in steps:
            db.execute(sql, arguments)

    def finish(self, db, batch, sent):
        db.execute("DELETE FROM dally_inflight_rows WHERE batch = ?", (batch,))

    def pending(self, db):
        return db.execute("SELECT COUNT(*) FROM dally_outbox").fetchone()[0]


class MarkedSchema:
    name, schema = "marked", MARKED
    write = V12Schema.write
    pending = V12Schema.pending

    def plan(self, db, cursor):
        return db.execute("""SELECT o.base_version, t.id, t.seq, t.updated_at, t.deleted, t.c_name, t.c_qty, t.c_price, t.c_paid
            FROM dally_outbox o JOIN t_bench t ON t.id = o.row_id
            WHERE o.tbl = 'bench' AND o.row_id > ? AND o.parked IS NULL AND o.flight IS NULL
            ORDER BY o.row_id LIMIT ?""", (cursor, batch_rows)).fetchall()

    def record(self, db, batch, sent):
        self.highest = max(seq for _, seq in sent)
        db.execute("UPDATE dally_outbox SET flight = ?1 WHERE tbl = 'bench' AND row_id IN (SELECT value FROM json_each(?2))",
            (batch, json.dumps([row_id for row_id, _ in sent])))

    def settle(self, db, batch, accepted):
        steps = [
            ("DELETE FROM temp.dally_accepted", ()),
            ("""INSERT INTO temp.dally_accepted (id, version, at, bytes, unchanged)
                SELECT o.row_id, json_extract(j.value, '$[1]'), o.first_dirty_at, o.bytes, IFNULL(t.seq <= ?3, 0)
                FROM json_each(?1) AS j
                CROSS JOIN dally_outbox AS o ON o.tbl = 'bench' AND o.row_id = json_extract(j.value, '$[0]')
                LEFT JOIN t_bench AS t ON t.id = o.row_id
                WHERE o.flight = ?2""", (json.dumps(accepted), batch, self.highest)),
            ("UPDATE t_bench SET version = a.version FROM temp.dally_accepted AS a WHERE a.unchanged AND t_bench.id = a.id", ()),
            ("INSERT INTO dally_outbox_settling (tbl) VALUES ('bench')", ()),
            *[(sql, ()) for sql in AGES_SETTLED],
            ("DELETE FROM dally_outbox WHERE tbl = 'bench' AND row_id IN (SELECT id FROM temp.dally_accepted WHERE unchanged)", ()),
            ("DELETE FROM dally_outbox_settling", ()),
            ("""UPDATE dally_outbox SET base_version = (SELECT a.version FROM temp.dally_accepted a WHERE a.id = dally_outbox.row_id),
                first_dirty_at = MAX(first_dirty_at, 0), flight = NULL
                WHERE tbl = 'bench' AND row_id IN (SELECT id FROM temp.dally_accepted WHERE NOT unchanged)""", ()),
        ]
        for sql, arguments in steps:
            db.execute(sql, arguments)

    def finish(self, db, batch, sent):
        pass


class ColumnsSchema:
    name, schema = "columns", COLUMNS

    def write(self, db, chunk, seq, now):
        for i, row_id in enumerate(chunk):
            db.execute("""INSERT INTO t_bench VALUES (?, ?, ?, 0, NULL, ?, ?, 2.5, 0, ?, NULL, 1, 80, NULL, NULL, NULL)""",
                (row_id, seq + i, now, f"backlog {i}", i % 1000, now))
        # What the triggers did, once per transaction (the commit context knows its growth).
        db.execute("""INSERT INTO dally_outbox_totals VALUES ('bench', ?, ?)
            ON CONFLICT(tbl) DO UPDATE SET entries = entries + excluded.entries, bytes = bytes + excluded.bytes""",
            (len(chunk), 80 * len(chunk)))
        db.execute("""INSERT INTO dally_outbox_ages VALUES ('bench', ?, ?)
            ON CONFLICT(tbl, at) DO UPDATE SET entries = entries + excluded.entries""", (now, len(chunk)))

    def plan(self, db, cursor):
        return db.execute("""SELECT base_version, id, seq, updated_at, deleted, c_name, c_qty, c_price, c_paid
            FROM t_bench INDEXED BY t_bench_pending
            WHERE id > ? AND pending_at IS NOT NULL AND flight IS NULL AND parked IS NULL
            ORDER BY id LIMIT ?""", (cursor, batch_rows)).fetchall()

    def record(self, db, batch, sent):
        db.execute("""UPDATE t_bench SET flight = ?, sent_seq = json_extract(j.value, '$[1]')
            FROM json_each(?) AS j WHERE t_bench.id = json_extract(j.value, '$[0]')""",
            (batch, json.dumps([[row_id, seq] for row_id, seq in sent])))

    def settle(self, db, batch, accepted):
        steps = [
            ("DELETE FROM temp.dally_accepted", ()),
            ("""INSERT INTO temp.dally_accepted (id, version, at, bytes, unchanged)
                SELECT t.id, json_extract(j.value, '$[1]'), t.pending_at, t.bytes, t.seq = t.sent_seq
                FROM json_each(?) AS j CROSS JOIN t_bench AS t ON t.id = json_extract(j.value, '$[0]')
                WHERE t.flight = ?""", (json.dumps(accepted), batch)),
            ("""UPDATE t_bench SET version = a.version, pending_at = NULL, base_version = NULL, writes = NULL,
                bytes = NULL, flight = NULL, sent_seq = NULL
                FROM temp.dally_accepted AS a WHERE a.unchanged AND t_bench.id = a.id""", ()),
            *[(sql, ()) for sql in AGES_SETTLED],
            ("""UPDATE t_bench SET base_version = a.version, flight = NULL, sent_seq = NULL, pending_at = MAX(pending_at, 0)
                FROM temp.dally_accepted AS a WHERE NOT a.unchanged AND t_bench.id = a.id""", ()),
        ]
        for sql, arguments in steps:
            db.execute(sql, arguments)

    def finish(self, db, batch, sent):
        # Rows the answer did not settle (none here) lose their mark by id: no index on it.
        db.execute("""UPDATE t_bench SET flight = NULL
            WHERE id IN (SELECT value FROM json_each(?)) AND flight = ?""", (json.dumps([i for i, _ in sent]), batch))

    def pending(self, db):
        return db.execute("SELECT COUNT(*) FROM t_bench WHERE pending_at IS NOT NULL").fetchone()[0]


def run(kind):
    path = os.path.join(directory, f"outbox-columns-{kind.name}.sqlite")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.executescript(kind.schema)
    db.execute(SCRATCH)
    spent = {}

    def timed(step, work):
        started = time.perf_counter()
        result = work()
        spent[step] = spent.get(step, 0.0) + time.perf_counter() - started
        return result

    def transaction(work):
        db.execute("BEGIN IMMEDIATE")
        work()
        db.execute("COMMIT")

    for start in range(0, rows, write_rows):
        chunk = ids[start:start + write_rows]
        timed("write", lambda: transaction(lambda: kind.write(db, chunk, start + 1, NOW + start // write_rows)))
    cursor, version, number = "", 0, 0
    while True:
        planned = timed("plan", lambda: kind.plan(db, cursor))
        if not planned:
            break
        cursor, number = planned[-1][1], number + 1
        batch = f"b{number}"
        sent = [(row[1], row[2]) for row in planned]

        def record():
            db.execute("INSERT INTO dally_inflight (batch, created_at, body, uploads, pulls) VALUES (?, 1, x'00', 'bench', 'bench')",
                (batch,))
            kind.record(db, batch, sent)
        timed("record", lambda: transaction(record))
        accepted = [[row_id, version + i + 1] for i, (row_id, _) in enumerate(sent)]
        version += len(sent)
        for start in range(0, len(accepted), piece * joined):
            def pieces():
                for at in range(start, min(start + piece * joined, len(accepted)), piece):
                    kind.settle(db, batch, accepted[at:at + piece])
            timed("settle", lambda: transaction(pieces))

        def finish():
            kind.finish(db, batch, sent)
            db.execute("DELETE FROM dally_inflight WHERE batch = ?", (batch,))
        timed("finish", lambda: transaction(finish))
    left = kind.pending(db)
    totals = db.execute("SELECT entries, bytes FROM dally_outbox_totals").fetchall()
    ages = db.execute("SELECT TOTAL(entries) FROM dally_outbox_ages").fetchone()[0]
    db.close()
    if left or totals != [(0, 0)] or ages:
        sys.exit(f"{kind.name}: the drain left {left} pending, totals {totals}, ages {ages}")
    return spent


steps = ["write", "plan", "record", "settle", "finish"]
print(f"{rows} rows, batches of {batch_rows}, SQLite {sqlite3.sqlite_version}; µs a row")
print(f"{'round':>5} {'schema':>8} " + " ".join(f"{s:>7}" for s in steps) + f" {'drain':>7}")
for number in range(1, rounds + 1):
    for kind in (V12Schema(), MarkedSchema(), ColumnsSchema()):
        spent = run(kind)
        drain = sum(v for k, v in spent.items() if k != "write")
        print(f"{number:>5} {kind.name:>8} " + " ".join(f"{spent.get(s, 0) / rows * 1e6:7.2f}" for s in steps)
              + f" {drain / rows * 1e6:7.2f}")
