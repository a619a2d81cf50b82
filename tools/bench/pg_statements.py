#!/usr/bin/env python3
"""Where a PostgreSQL batch's time goes: reads the statement log of a `dally-bench apply
--postgres` run and prints, for the first store part (`pg x1`), how long each batch held its
table's counter lock (from the end of `… FOR UPDATE` to the end of `COMMIT`, per backend) and
the server's time per statement kind inside it, per batch. The rest of the hold is the node's:
its own work and waiting for CPU between statements. Logging every statement slows the run;
compare builds with it on in both.

Usage:
  mkdir -p /tmp/pglogs && chown postgres /tmp/pglogs && rm -f /tmp/pglogs/*
  DALLY_PG_SETTINGS="-c log_min_duration_statement=0 -c logging_collector=on -c log_directory=/tmp/pglogs \\
    -c log_filename=pg.log -c log_line_prefix=%m,%p,%d," .build/release/dally-bench apply --postgres --batches 40
  python3 tools/bench/pg_statements.py [/tmp/pglogs/pg.log]
"""
import collections, datetime, re, sys

path = sys.argv[1] if len(sys.argv) > 1 else "/tmp/pglogs/pg.log"
line_shape = re.compile(r"(\S+ \S+) UTC,(\d+),([^,]*),LOG:  duration: ([\d.]+) ms  (\w+)[^:]*: (.{0,200})")
databases, events = [], collections.defaultdict(list)
for line in open(path, errors="replace"):
    m = line_shape.match(line)
    if not m:
        continue
    at = datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f").timestamp() * 1000
    database = m.group(3)
    if database not in databases:
        databases.append(database)
    events[database].append((at, int(m.group(2)), float(m.group(4)), m.group(5), m.group(6)))
# The first database is `postgres` (where the bench creates the others); the next is `pg x1`.
stores = [d for d in databases if d != "postgres"]
if not stores:
    sys.exit(f"no store statements in {path}")
by_backend = collections.defaultdict(list)
for event in events[stores[0]]:
    by_backend[event[1]].append(event)
held, inside = [], collections.defaultdict(float)
for backend in by_backend.values():
    locked_at = None
    for at, _, ms, kind, text in backend:
        if kind == "execute" and "FOR UPDATE" in text:
            locked_at = at
            continue
        if locked_at is not None:
            inside[kind + " " + re.sub(r"\$\d+", "$", text)[:60]] += ms
            if kind == "execute" and text.startswith("COMMIT"):
                held.append(at - locked_at)
                locked_at = None
if not held:
    sys.exit("no batch held a counter lock in the first store part")
print(f"database {stores[0]}: {len(held)} batches, counter lock held {sum(held) / len(held):.1f} ms per batch, "
      f"of which the server's statements {sum(inside.values()) / len(held):.1f} ms")
for statement, ms in sorted(inside.items(), key=lambda item: -item[1])[:12]:
    print(f"{ms / len(held):8.2f} ms/batch  {statement}")
