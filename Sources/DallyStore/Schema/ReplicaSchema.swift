import DallyCore
import Foundation
import GRDB

/// Creates the replica's own tables; ``ColumnCatalogue`` brings the row tables in line with
/// the configuration.
enum ReplicaSchema {
    static func migrator() -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: ColumnCatalogue.createStatement)
            try db.execute(
                sql: """
                    CREATE TABLE dally_meta (key TEXT NOT NULL PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
                    INSERT INTO dally_meta (key, value) VALUES ('last_seq', 0);
                    CREATE TABLE dally_outbox (
                        tbl TEXT NOT NULL,
                        row_id TEXT NOT NULL,
                        first_dirty_at INTEGER NOT NULL,
                        last_write_at INTEGER NOT NULL,
                        base_version INTEGER,
                        writes INTEGER NOT NULL,
                        PRIMARY KEY (tbl, row_id)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v2-sync") { db in
            // The replica id names this copy of the data to the cloud; a new data directory is
            // a new replica, so a gateway that lost its disk is sent its own rows back.
            try db.execute(
                sql: """
                    ALTER TABLE dally_outbox ADD COLUMN parked TEXT;
                    CREATE TABLE dally_settings (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
                    CREATE TABLE dally_cloud_cursors (tbl TEXT NOT NULL PRIMARY KEY, version INTEGER NOT NULL) WITHOUT ROWID;
                    CREATE TABLE dally_inflight (
                        batch TEXT NOT NULL PRIMARY KEY,
                        created_at INTEGER NOT NULL,
                        body BLOB NOT NULL
                    ) WITHOUT ROWID;
                    CREATE TABLE dally_inflight_rows (
                        tbl TEXT NOT NULL, row_id TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (tbl, row_id)
                    ) WITHOUT ROWID;
                    CREATE TABLE dally_conflicts (
                        tbl TEXT NOT NULL,
                        row_id TEXT NOT NULL,
                        kind TEXT NOT NULL,
                        status TEXT NOT NULL,
                        detected_at INTEGER NOT NULL,
                        policy TEXT,
                        winner TEXT,
                        server_version INTEGER,
                        server_updated_at INTEGER,
                        server_deleted INTEGER,
                        server_values TEXT,
                        error_code TEXT,
                        error_message TEXT,
                        error_field TEXT,
                        PRIMARY KEY (tbl, row_id)
                    ) WITHOUT ROWID;
                    """)
            try db.execute(
                sql: "INSERT INTO dally_settings (key, value) VALUES ('replica_id', ?)",
                arguments: [UUID().uuidString.lowercased()])
        }
        migrator.registerMigration("v3-scheduler") { db in
            // Pending bytes weigh the scheduler's size bound; several batches may be in flight
            // at once (one stuck on an uplink that went down must not hold back tables that
            // may use another), so each in-flight row names its batch, and each batch the
            // tables it carries up (`uploads`) and asks down (`pulls`), which decide the
            // uplinks it may be resent on. `dally_pulls` keeps download periods across restarts.
            try db.execute(
                sql: """
                    ALTER TABLE dally_outbox ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE dally_inflight ADD COLUMN uploads TEXT;
                    ALTER TABLE dally_inflight ADD COLUMN pulls TEXT;
                    ALTER TABLE dally_inflight_rows ADD COLUMN batch TEXT;
                    UPDATE dally_inflight_rows SET batch = (SELECT batch FROM dally_inflight LIMIT 1);
                    CREATE INDEX dally_inflight_rows_batch ON dally_inflight_rows (batch);
                    CREATE TABLE dally_pulls (tbl TEXT NOT NULL PRIMARY KEY, pulled_at INTEGER NOT NULL) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v4-dictionaries") { db in
            // Compression dictionaries trained on this replica's traffic: kept so that a
            // restart goes on compressing with those the cloud acknowledged (`acked_at`).
            try db.execute(
                sql: """
                    CREATE TABLE dally_dictionaries (
                        id INTEGER NOT NULL PRIMARY KEY,
                        tbl TEXT NOT NULL,
                        bytes BLOB NOT NULL,
                        created_at INTEGER NOT NULL,
                        acked_at INTEGER
                    );
                    """)
        }
        migrator.registerMigration("v5-objects") { db in
            // Large objects. The chunk bytes live in chunks.sqlite; here are the objects this
            // replica knows (hash = SHA-256 hex of the content; `manifest` the packed chunk list,
            // null while only a downloaded row's reference is known; `local` = 1 once every
            // chunk is in the chunk store; `in_cloud` = 1 once the cloud holds it whole), which
            // row column references which object (refs: what GC keeps and atomic rows wait
            // for), the objects the cloud may still lack (uploads, with
            // the table whose object policy they travel under), and the objects to fetch from
            // the cloud under their table's download policy (downloads).
            try db.execute(
                sql: """
                    CREATE TABLE dally_objects (
                        hash TEXT NOT NULL PRIMARY KEY,
                        size INTEGER NOT NULL,
                        chunk_count INTEGER NOT NULL,
                        manifest BLOB,
                        local INTEGER NOT NULL,
                        in_cloud INTEGER NOT NULL DEFAULT 0,
                        created_at INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    CREATE TABLE dally_object_refs (
                        tbl TEXT NOT NULL,
                        row_id TEXT NOT NULL,
                        col TEXT NOT NULL,
                        hash TEXT NOT NULL,
                        PRIMARY KEY (tbl, row_id, col)
                    ) WITHOUT ROWID;
                    CREATE INDEX dally_object_refs_hash ON dally_object_refs (hash);
                    CREATE TABLE dally_object_uploads (
                        hash TEXT NOT NULL PRIMARY KEY,
                        tbl TEXT NOT NULL,
                        first_dirty_at INTEGER NOT NULL,
                        size INTEGER NOT NULL,
                        bytes_sent INTEGER NOT NULL DEFAULT 0,
                        attempts INTEGER NOT NULL DEFAULT 0
                    ) WITHOUT ROWID;
                    CREATE TABLE dally_object_downloads (
                        hash TEXT NOT NULL PRIMARY KEY,
                        tbl TEXT NOT NULL,
                        queued_at INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v6-announced-uploads") { db in
            // `announced` = 1 once a row version naming the object has left in a batch: the
            // cloud may then hold a row that names it, so the upload must finish even if no row
            // here references the object any more. Uploads queued before this column existed
            // count as announced (the safe side).
            try db.execute(
                sql: "ALTER TABLE dally_object_uploads ADD COLUMN announced INTEGER NOT NULL DEFAULT 1")
        }
        migrator.registerMigration("v7-upload-progress") { db in
            // How many of the object's distinct chunks, in manifest order, are known to be in
            // the cloud: a resumed upload asks only about the rest.
            try db.execute(sql: "ALTER TABLE dally_object_uploads ADD COLUMN chunks_done INTEGER NOT NULL DEFAULT 0")
        }
        migrator.registerMigration("v8-lifecycle") { db in
            // Data that shrinks. `dally_outbox_totals` follows the outbox by triggers, so that
            // the bound on a table's outbox and the backlog summary cost a point lookup rather
            // than a `GROUP BY` over every pending row. `dally_lifecycle` keeps each table's
            // horizon (the highest sequence number of a purged tombstone: a local reader
            // behind it must resync) and what compaction, retention and a full outbox dropped.
            // `dally_resync` marks tables being pulled again from scratch, and
            // `dally_resync_rows` the clean rows not yet seen again: those left at the end are
            // rows the cloud no longer has.
            try db.execute(
                sql: """
                    CREATE TABLE dally_outbox_totals (
                        tbl TEXT NOT NULL PRIMARY KEY, entries INTEGER NOT NULL, bytes INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    INSERT INTO dally_outbox_totals (tbl, entries, bytes)
                        SELECT tbl, COUNT(*), SUM(bytes) FROM dally_outbox GROUP BY tbl;
                    CREATE TRIGGER dally_outbox_counted AFTER INSERT ON dally_outbox BEGIN
                        INSERT INTO dally_outbox_totals (tbl, entries, bytes) VALUES (new.tbl, 1, new.bytes)
                        ON CONFLICT(tbl) DO UPDATE SET entries = entries + 1, bytes = bytes + excluded.bytes;
                    END;
                    CREATE TRIGGER dally_outbox_uncounted AFTER DELETE ON dally_outbox BEGIN
                        UPDATE dally_outbox_totals SET entries = entries - 1, bytes = bytes - old.bytes
                        WHERE tbl = old.tbl;
                    END;
                    CREATE TRIGGER dally_outbox_resized AFTER UPDATE OF bytes ON dally_outbox
                    WHEN new.bytes <> old.bytes BEGIN
                        UPDATE dally_outbox_totals SET bytes = bytes + new.bytes - old.bytes WHERE tbl = new.tbl;
                    END;
                    CREATE INDEX dally_outbox_age ON dally_outbox (tbl, first_dirty_at);
                    CREATE INDEX dally_outbox_parked ON dally_outbox (tbl) WHERE parked IS NOT NULL;
                    CREATE TABLE dally_lifecycle (
                        tbl TEXT NOT NULL PRIMARY KEY,
                        horizon INTEGER NOT NULL DEFAULT 0,
                        tombstones_purged INTEGER NOT NULL DEFAULT 0,
                        retained_removed INTEGER NOT NULL DEFAULT 0,
                        dropped_on_full INTEGER NOT NULL DEFAULT 0,
                        resyncs INTEGER NOT NULL DEFAULT 0,
                        cloud_removed INTEGER NOT NULL DEFAULT 0
                    ) WITHOUT ROWID;
                    CREATE TABLE dally_resync (tbl TEXT NOT NULL PRIMARY KEY, started_at INTEGER NOT NULL) WITHOUT ROWID;
                    CREATE TABLE dally_resync_rows (
                        tbl TEXT NOT NULL, row_id TEXT NOT NULL, PRIMARY KEY (tbl, row_id)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v9-tinysync-marks") { db in
            // TinySync's `last_synced` is a time; the replica's cursor is a tie-free sequence.
            // Each TinySync answer records the time it hands out and the sequence its rows
            // reached, so that the time, sent back, resumes exactly there (``TinySyncMarks``).
            try db.execute(
                sql: "CREATE TABLE dally_tinysync_marks (at INTEGER NOT NULL PRIMARY KEY, seq INTEGER NOT NULL) WITHOUT ROWID")
        }
        migrator.registerMigration("v10-outbox-ages") { db in
            // The outbox's ages as counts per table and first-dirty time, kept by triggers, in
            // place of the `(tbl, first_dirty_at)` index. Batches take rows in id order, so an
            // answer deleted its rows from random places of that index, a page written for
            // nearly every row; a backlog written quickly shares few first-dirty times, so the
            // counts are a few small rows that stay in the cache (an answer to a backlog written
            // 20 rows a request took the writer 0.6-0.7× the time; docs/BENCHMARKS.md).
            // ``Outbox`` finds the oldest waiting entry from the counts; `drop_oldest` tables
            // keep an index of their own (`TableSQL.outboxAgeIndex`).
            try db.execute(
                sql: """
                    CREATE TABLE dally_outbox_ages (
                        tbl TEXT NOT NULL, at INTEGER NOT NULL, entries INTEGER NOT NULL, PRIMARY KEY (tbl, at)
                    ) WITHOUT ROWID;
                    INSERT INTO dally_outbox_ages (tbl, at, entries)
                        SELECT tbl, first_dirty_at, COUNT(*) FROM dally_outbox GROUP BY tbl, first_dirty_at;
                    CREATE TRIGGER dally_outbox_aged AFTER INSERT ON dally_outbox BEGIN
                        \(Self.ageAdded("new"))
                    END;
                    CREATE TRIGGER dally_outbox_unaged AFTER DELETE ON dally_outbox BEGIN
                        \(Self.ageRemoved("old"))
                    END;
                    CREATE TRIGGER dally_outbox_reaged AFTER UPDATE OF first_dirty_at ON dally_outbox
                    WHEN new.first_dirty_at <> old.first_dirty_at BEGIN
                        \(Self.ageRemoved("old"))
                        \(Self.ageAdded("new"))
                    END;
                    DROP INDEX dally_outbox_age;
                    """)
        }
        migrator.registerMigration("v11-inflight-entries") { db in
            // Each in-flight row mirrors its outbox entry's first-dirty time and bytes (`at`
            // NULL while it has none), kept by triggers, so that a summary counts what is in
            // flight from these rows alone: joined with the outbox for every one of a 5,000-row
            // batch, `/stats` took 9-12 ms instead of 2-3 while a batch was in flight.
            try db.execute(
                sql: """
                    ALTER TABLE dally_inflight_rows ADD COLUMN at INTEGER;
                    ALTER TABLE dally_inflight_rows ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;
                    UPDATE dally_inflight_rows SET
                        at = (SELECT o.first_dirty_at FROM dally_outbox o
                            WHERE o.tbl = dally_inflight_rows.tbl AND o.row_id = dally_inflight_rows.row_id),
                        bytes = IFNULL((SELECT o.bytes FROM dally_outbox o
                            WHERE o.tbl = dally_inflight_rows.tbl AND o.row_id = dally_inflight_rows.row_id), 0);
                    CREATE TRIGGER dally_outbox_flight_entered AFTER INSERT ON dally_outbox BEGIN
                        \(Self.flightMirrors("new"))
                    END;
                    CREATE TRIGGER dally_outbox_flight_changed AFTER UPDATE OF first_dirty_at, bytes ON dally_outbox
                    WHEN new.first_dirty_at <> old.first_dirty_at OR new.bytes <> old.bytes BEGIN
                        \(Self.flightMirrors("new"))
                    END;
                    CREATE TRIGGER dally_outbox_flight_left AFTER DELETE ON dally_outbox BEGIN
                        UPDATE dally_inflight_rows SET at = NULL, bytes = 0 WHERE tbl = old.tbl AND row_id = old.row_id;
                    END;
                    """)
        }
        migrator.registerMigration("v12-settled-in-sets") { db in
            // Settling an answer deletes thousands of outbox entries at once; the three
            // delete triggers ran four statements for each of them (5-6 µs a row, about a third
            // of a settle). While `dally_outbox_settling` holds a row, they stand aside and the
            // settle keeps the totals, the ages and the in-flight mirrors itself, in a few
            // set-based statements (``AcceptedRows``); the row exists only inside that
            // statement sequence, in the settle's own transaction, so every other delete, and
            // any other connection, sees the triggers as before. The in-flight rows' batch index
            // goes too: what reads a batch's rows scans the in-flight rows, a few batches'
            // worth, and each row of every batch paid for the index twice.
            try db.execute(
                sql: """
                    CREATE TABLE dally_outbox_settling (tbl TEXT NOT NULL PRIMARY KEY) WITHOUT ROWID;
                    DROP TRIGGER dally_outbox_uncounted;
                    DROP TRIGGER dally_outbox_unaged;
                    DROP TRIGGER dally_outbox_flight_left;
                    CREATE TRIGGER dally_outbox_uncounted AFTER DELETE ON dally_outbox
                    WHEN NOT EXISTS (SELECT 1 FROM dally_outbox_settling) BEGIN
                        UPDATE dally_outbox_totals SET entries = entries - 1, bytes = bytes - old.bytes
                        WHERE tbl = old.tbl;
                    END;
                    CREATE TRIGGER dally_outbox_unaged AFTER DELETE ON dally_outbox
                    WHEN NOT EXISTS (SELECT 1 FROM dally_outbox_settling) BEGIN
                        \(Self.ageRemoved("old"))
                    END;
                    CREATE TRIGGER dally_outbox_flight_left AFTER DELETE ON dally_outbox
                    WHEN NOT EXISTS (SELECT 1 FROM dally_outbox_settling) BEGIN
                        UPDATE dally_inflight_rows SET at = NULL, bytes = 0 WHERE tbl = old.tbl AND row_id = old.row_id;
                    END;
                    DROP INDEX dally_inflight_rows_batch;
                    """)
        }
        migrator.registerMigration("v13-outbox-triggers-folded") { db in
            // One trigger per event instead of three: SQLite runs each trigger as a program of
            // its own (and evaluates each `WHEN` again), for every entry a local write adds and
            // every entry a write outside a settle removes. The same statements, in the same
            // order; local batch writes and a settle's deletes 0.4-1.3 and 0.3-0.5 µs a row
            // cheaper on the replica's SQL (docs/BENCHMARKS.md).
            try db.execute(
                sql: """
                    DROP TRIGGER dally_outbox_counted;
                    DROP TRIGGER dally_outbox_aged;
                    DROP TRIGGER dally_outbox_flight_entered;
                    DROP TRIGGER dally_outbox_uncounted;
                    DROP TRIGGER dally_outbox_unaged;
                    DROP TRIGGER dally_outbox_flight_left;
                    CREATE TRIGGER dally_outbox_entered AFTER INSERT ON dally_outbox BEGIN
                        \(Self.totalAdded("new"))
                        \(Self.ageAdded("new"))
                        \(Self.flightMirrors("new"))
                    END;
                    CREATE TRIGGER dally_outbox_left AFTER DELETE ON dally_outbox
                    WHEN NOT EXISTS (SELECT 1 FROM dally_outbox_settling) BEGIN
                        UPDATE dally_outbox_totals SET entries = entries - 1, bytes = bytes - old.bytes
                        WHERE tbl = old.tbl;
                        \(Self.ageRemoved("old"))
                        UPDATE dally_inflight_rows SET at = NULL, bytes = 0 WHERE tbl = old.tbl AND row_id = old.row_id;
                    END;
                    """)
        }
        migrator.registerMigration("v14-outbox-deletes-uncounted-by-their-writers") { db in
            // No delete trigger: even standing aside (v12's `WHEN`), it made SQLite delete a
            // settle's entries in two passes and start its program for each: a settle cost a
            // quarter less without it. What deletes an entry uncounts it:
            // ``Outbox/remove(table:rowID:previousSeq:mayBeInFlight:db:)`` one at a time, ``AcceptedRows`` in sets.
            try db.execute(
                sql: """
                    DROP TRIGGER dally_outbox_left;
                    DROP TABLE dally_outbox_settling;
                    """)
        }
        migrator.registerMigration("v15-inflight-tallies") { db in
            // Per batch in flight and table, its records' entries, bytes and first-dirty times
            // (``FlightTally``): a summary adds these up instead of scanning every record. A
            // record whose mirror changes marks its tally stale (`ages` NULL), and the summary
            // scans again; so do the batches in flight at the upgrade, until they land (a
            // record of schema v2's, with no batch, for good).
            try db.execute(
                sql: """
                    CREATE TABLE dally_inflight_tallies (
                        tbl TEXT NOT NULL, batch TEXT NOT NULL,
                        entries INTEGER NOT NULL, bytes INTEGER NOT NULL, ages BLOB,
                        PRIMARY KEY (tbl, batch)
                    ) WITHOUT ROWID;
                    INSERT INTO dally_inflight_tallies (tbl, batch, entries, bytes, ages)
                        SELECT DISTINCT tbl, IFNULL(batch, ''), 0, 0, NULL FROM dally_inflight_rows;
                    CREATE TRIGGER dally_inflight_rows_remirrored AFTER UPDATE OF at, bytes ON dally_inflight_rows
                    WHEN old.at IS NOT new.at OR old.bytes <> new.bytes BEGIN
                        UPDATE dally_inflight_tallies SET ages = NULL WHERE tbl = new.tbl AND batch = new.batch;
                    END;
                    """)
        }
        migrator.registerMigration("v16-refused-uploads") { db in
            // An object the cloud refused (over its objects.max_bytes) waits, out of the upload
            // queue's sight, until the app settles its rows' records (``ReplicaStore/refuseObjectUpload(_:code:message:)``).
            try db.execute(sql: "ALTER TABLE dally_object_uploads ADD COLUMN refused INTEGER NOT NULL DEFAULT 0")
        }
        migrator.registerMigration("v17-schema-changes") { db in
            // A table pulled again from scratch because columns were added to it (``ColumnFill``):
            // the added columns' names, comma-separated; NULL for a resync the cloud asked for.
            try db.execute(sql: "ALTER TABLE dally_resync ADD COLUMN fill TEXT")
            // Changes refused for the cloud's schema (``SchemaRefusals``), found at each answer
            // the cloud accepts a change in.
            try db.execute(
                sql: """
                    CREATE INDEX dally_conflicts_schema ON dally_conflicts (tbl)
                    WHERE status = 'open' AND kind = 'error' AND error_code IN ('unknown_table', 'unknown_column')
                    """)
        }
        migrator.registerMigration("v18-inflight-sections") { db in
            // A batch in flight records which rows it carries once per table, not once per row
            // (``FlightSections``): the records of the batches in flight become their sections;
            // their tallies are counted again from them until those batches land; and the
            // outbox's triggers no longer mirror entries into records.
            try db.execute(
                sql: """
                    CREATE TABLE dally_inflight_sections (
                        batch TEXT NOT NULL, tbl TEXT NOT NULL,
                        ids TEXT NOT NULL, lowest TEXT NOT NULL, highest TEXT NOT NULL,
                        seq INTEGER NOT NULL, settled TEXT,
                        PRIMARY KEY (batch, tbl)
                    ) WITHOUT ROWID;
                    INSERT INTO dally_inflight_sections (batch, tbl, ids, lowest, highest, seq)
                        SELECT batch, tbl, json_group_array(row_id), MIN(row_id), MAX(row_id), MAX(seq) FROM (
                            SELECT batch, tbl, row_id, seq FROM dally_inflight_rows
                            WHERE batch IS NOT NULL ORDER BY batch, tbl, row_id)
                        GROUP BY batch, tbl;
                    UPDATE dally_inflight_tallies SET ages = NULL;
                    DROP TRIGGER dally_outbox_flight_changed;
                    DROP TRIGGER dally_outbox_entered;
                    CREATE TRIGGER dally_outbox_entered AFTER INSERT ON dally_outbox BEGIN
                        \(Self.totalAdded("new"))
                        \(Self.ageAdded("new"))
                    END;
                    DROP TABLE dally_inflight_rows;
                    """)
        }
        migrator.registerMigration("v19-inflight-ids-apart") { db in
            // A section's ids leave its record for a table of their own: moving its `settled`
            // mark no longer rewrites them (``FlightSections/separateIDs``).
            try db.execute(sql: FlightSections.separateIDs)
        }
        return migrator
    }

    /// Copies entry `row`'s first-dirty time and bytes to its in-flight row, if it has one.
    private static func flightMirrors(_ row: String) -> String {
        """
        UPDATE dally_inflight_rows SET at = \(row).first_dirty_at, bytes = \(row).bytes
            WHERE tbl = \(row).tbl AND row_id = \(row).row_id;
        """
    }

    /// Adds entry `row` (`new` in a trigger) to its table's totals.
    private static func totalAdded(_ row: String) -> String {
        """
        INSERT INTO dally_outbox_totals (tbl, entries, bytes) VALUES (\(row).tbl, 1, \(row).bytes)
            ON CONFLICT(tbl) DO UPDATE SET entries = entries + 1, bytes = bytes + excluded.bytes;
        """
    }

    /// Counts entry `row` (`new` or `old` in a trigger) at its first-dirty time.
    private static func ageAdded(_ row: String) -> String {
        """
        INSERT INTO dally_outbox_ages (tbl, at, entries) VALUES (\(row).tbl, \(row).first_dirty_at, 1)
            ON CONFLICT(tbl, at) DO UPDATE SET entries = entries + 1;
        """
    }

    /// Uncounts entry `row`, removing its time's count when it was the last entry there.
    private static func ageRemoved(_ row: String) -> String {
        """
        DELETE FROM dally_outbox_ages WHERE tbl = \(row).tbl AND at = \(row).first_dirty_at AND entries = 1;
        UPDATE dally_outbox_ages SET entries = entries - 1 WHERE tbl = \(row).tbl AND at = \(row).first_dirty_at;
        """
    }
}
