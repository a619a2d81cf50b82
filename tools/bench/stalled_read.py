#!/usr/bin/env python3
"""What a summary of the outbox (`/stats`, every scheduler decision) costs while batches are in
flight: the statements of `StalledEntries.read` (Sources/DallyStore/StalledEntries.swift) on
the replica's schema, through the system SQLite, in memory.

- `grouped`: before 2026-11-28, one `GROUP BY` over every in-flight row, the parked and held
  ones beside them (`UNION ALL`): SQLite sorts every row in flight to group them.
- `split`: the in-flight rows grouped by time only among the oldest times (as a summary asks),
  the rest in one sum; parked entries in a statement of their own.

ROWS outbox entries with first-dirty times spread over 4.4 s (a backlog written at ~23,000
rows/s), FLIGHT of them in flight; the summary counts by time through the 64th oldest time.
Prints ms a read (mean of 50) and checks both give the same counts.

Usage:  python3 tools/bench/stalled_read.py [FLIGHT]      (default 10000: two 5,000-row batches)
Env:    ROWS [100000]
"""
import os, random, sqlite3, sys, time, uuid

flight = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
rows = int(os.environ.get("ROWS", "100000"))
db = sqlite3.connect(":memory:")
db.executescript("""
CREATE TABLE dally_outbox (tbl TEXT NOT NULL, row_id TEXT NOT NULL, first_dirty_at INTEGER NOT NULL,
    last_write_at INTEGER NOT NULL, base_version INTEGER, writes INTEGER NOT NULL, parked TEXT,
    bytes INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (tbl, row_id)) WITHOUT ROWID;
CREATE INDEX dally_outbox_parked ON dally_outbox (tbl) WHERE parked IS NOT NULL;
CREATE TABLE dally_inflight_rows (tbl TEXT NOT NULL, row_id TEXT NOT NULL, seq INTEGER NOT NULL, batch TEXT,
    at INTEGER, bytes INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (tbl, row_id)) WITHOUT ROWID;
""")
start = 1_795_670_000_000
entries = [("bench", str(uuid.uuid4()), start + random.randrange(4400), start, None, 1, None, 80) for _ in range(rows)]
entries.sort(key=lambda e: e[1])
db.executemany("INSERT INTO dally_outbox VALUES (?,?,?,?,?,?,?,?)", entries)
db.executemany("INSERT INTO dally_inflight_rows VALUES (?,?,?,?,?,?)",
               [("bench", e[1], 5, "b", e[2], e[7]) for e in entries[:flight]])
through = sorted({e[2] for e in entries})[63]

not_in_flight = "NOT EXISTS (SELECT 1 FROM dally_inflight_rows r WHERE r.tbl = o.tbl AND r.row_id = o.row_id)"
parked = f"""SELECT o.first_dirty_at AS at, o.bytes AS bytes, NOT {not_in_flight} AS flying
    FROM dally_outbox o INDEXED BY dally_outbox_parked WHERE o.tbl = ?1 AND o.parked IS NOT NULL"""
grouped = [f"""SELECT CASE WHEN at <= ?2 THEN at END AS near, SUM(counted), SUM(bytes), SUM(flying), SUM(parked), SUM(held)
FROM (
    SELECT r.at AS at, 1 AS counted, r.bytes AS bytes, 1 AS flying, 0 AS parked, 0 AS held
    FROM dally_inflight_rows r WHERE r.tbl = ?1 AND r.at IS NOT NULL
    UNION ALL
    SELECT at, NOT flying, bytes * NOT flying, 0, 1, 0 FROM ({parked})
) GROUP BY near"""]
split = ["""SELECT at, COUNT(*), SUM(bytes), COUNT(*), 0, 0 FROM dally_inflight_rows WHERE tbl = ?1 AND at <= ?2 GROUP BY at
UNION ALL
SELECT NULL, COUNT(*), IFNULL(SUM(bytes), 0), COUNT(*), 0, 0 FROM dally_inflight_rows WHERE tbl = ?1 AND at > ?2""",
         f"""SELECT CASE WHEN at <= ?2 THEN at END AS near, SUM(counted), SUM(bytes), SUM(flying), SUM(parked), SUM(held)
FROM (SELECT at, NOT flying AS counted, bytes * NOT flying AS bytes, 0 AS flying, 1 AS parked, 0 AS held FROM ({parked}))
GROUP BY near"""]


def read(statements):
    counts = {}
    for sql in statements:
        for at, count, size, flying, parked_, held in db.execute(sql, ("bench", through)):
            if count:
                total = counts.setdefault(at, [0, 0, 0])
                total[0] += count; total[1] += size; total[2] += flying
    return counts


assert read(grouped) == read(split), "the two reads disagree"
print(f"{rows} entries, {flight} in flight, SQLite {sqlite3.sqlite_version}")
for round_ in range(3):
    for name, statements in (("grouped", grouped), ("split", split)):
        began = time.perf_counter()
        for _ in range(50):
            read(statements)
        print(f"round {round_ + 1}  {name:8s} {(time.perf_counter() - began) / 50 * 1000:.2f} ms a read")
