#!/usr/bin/env python3
"""What a delete trigger on the outbox costs a settle, per deleted row.

A table shaped like `dally_outbox` (WITHOUT ROWID, key (tbl, row_id)) holds ROWS random-id
entries; one statement deletes them all (`DELETE … WHERE tbl = ? AND row_id IN (SELECT id
FROM a temporary table)`, as `AcceptedRows.settle` does) inside a transaction, with the
triggers of each variant in place; CPU µs per deleted row, ROUNDS rounds:

- `none`: no trigger.
- `cheap_when`: one AFTER DELETE trigger whose WHEN is false without a lookup (`old.bytes < 0`).
- `always`: one trigger with no WHEN, one UPDATE in its body.
- `standing_aside`: the replica's three (schema v12), each `WHEN NOT EXISTS (SELECT 1 FROM
  dally_outbox_settling)`, with a row in that table, as during a settle.
- `merged`: the same three bodies in one trigger with that WHEN.

Usage:  python3 tools/bench/trigger_cost.py [ROWS] [ROUNDS]     (default 100000 3; ~30 s)
"""
import os
import sqlite3
import sys
import tempfile
import time
import uuid

ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3

AGE_REMOVED = "DELETE FROM ages WHERE tbl = old.tbl AND at = old.at AND entries = 1; " \
    "UPDATE ages SET entries = entries - 1 WHERE tbl = old.tbl AND at = old.at;"
TOTALS = "UPDATE totals SET entries = entries - 1, bytes = bytes - old.bytes WHERE tbl = old.tbl;"
MIRROR = "UPDATE inflight SET at = NULL, bytes = 0 WHERE tbl = old.tbl AND row_id = old.row_id;"
ASIDE = "WHEN NOT EXISTS (SELECT 1 FROM settling)"
VARIANTS = {
    "none": [],
    "cheap_when": [f"CREATE TRIGGER t1 AFTER DELETE ON outbox WHEN old.bytes < 0 BEGIN {TOTALS} END"],
    "always": [f"CREATE TRIGGER t1 AFTER DELETE ON outbox BEGIN {TOTALS} END"],
    "standing_aside": [
        f"CREATE TRIGGER t1 AFTER DELETE ON outbox {ASIDE} BEGIN {TOTALS} END",
        f"CREATE TRIGGER t2 AFTER DELETE ON outbox {ASIDE} BEGIN {AGE_REMOVED} END",
        f"CREATE TRIGGER t3 AFTER DELETE ON outbox {ASIDE} BEGIN {MIRROR} END",
    ],
    "merged": [f"CREATE TRIGGER t1 AFTER DELETE ON outbox {ASIDE} BEGIN {TOTALS} {AGE_REMOVED} {MIRROR} END"],
}


def run(variant: str, directory: str) -> float:
    path = os.path.join(directory, f"{variant}.sqlite")
    db = sqlite3.connect(path, isolation_level=None)
    db.executescript("""
        PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;
        CREATE TABLE outbox (tbl TEXT NOT NULL, row_id TEXT NOT NULL, at INTEGER NOT NULL, bytes INTEGER NOT NULL,
            PRIMARY KEY (tbl, row_id)) WITHOUT ROWID;
        CREATE TABLE totals (tbl TEXT NOT NULL PRIMARY KEY, entries INTEGER, bytes INTEGER) WITHOUT ROWID;
        CREATE TABLE ages (tbl TEXT NOT NULL, at INTEGER NOT NULL, entries INTEGER, PRIMARY KEY (tbl, at)) WITHOUT ROWID;
        CREATE TABLE inflight (tbl TEXT NOT NULL, row_id TEXT NOT NULL, at INTEGER, bytes INTEGER,
            PRIMARY KEY (tbl, row_id)) WITHOUT ROWID;
        CREATE TABLE settling (tbl TEXT NOT NULL PRIMARY KEY) WITHOUT ROWID;
        CREATE TEMP TABLE accepted (id TEXT NOT NULL PRIMARY KEY);
        INSERT INTO totals VALUES ('t', 0, 0);
        """)
    for statement in VARIANTS[variant]:
        db.execute(statement)
    ids = [(str(uuid.uuid4()),) for _ in range(ROWS)]
    db.execute("BEGIN")
    db.executemany("INSERT INTO outbox VALUES ('t', ?, 1, 50)", ids)
    db.executemany("INSERT INTO accepted VALUES (?)", ids)
    db.execute("COMMIT")
    started = time.process_time()
    db.execute("BEGIN")
    db.execute("INSERT INTO settling VALUES ('t')")
    db.execute("DELETE FROM outbox WHERE tbl = 't' AND row_id IN (SELECT id FROM accepted)")
    db.execute("DELETE FROM settling")
    db.execute("COMMIT")
    spent = time.process_time() - started
    db.close()
    return spent / ROWS * 1e6


print(f"SQLite {sqlite3.sqlite_version}, {ROWS} rows deleted by one statement; CPU µs per row")
with tempfile.TemporaryDirectory() as directory:
    for round in range(1, ROUNDS + 1):
        figures = {variant: run(variant, directory) for variant in VARIANTS}
        for variant in VARIANTS:
            os.remove(os.path.join(directory, f"{variant}.sqlite"))
        print(f"round {round}: " + "  ".join(f"{variant} {us:.2f}" for variant, us in figures.items()))
