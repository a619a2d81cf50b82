/*
 * Raw SQLite insert rate: the floor under the Dally gateway's write path.
 *
 * One process, one connection, the system libsqlite3, WAL, synchronous=FULL, and a row
 * table shaped like the gateway's bench table (same columns, WITHOUT ROWID, unique seq
 * index, the gateway's INSERT ... ON CONFLICT(id) DO UPDATE upsert), prepared statements:
 *   (a) batched:   rows inserted in transactions of --batch rows (default 1000)
 *   (b) single_tx: one transaction (so one WAL fsync) per row
 * Both phases are bounded by a row count and by a time limit, whichever comes first.
 * It does NOT write the gateway's outbox or meta rows, so it is an upper bound.
 *
 * Build and run (run.sh does this):
 *   cc -O2 -o /tmp/sqlite_insert tools/bench/sqlite_insert.c -lsqlite3
 *   /tmp/sqlite_insert /tmp/some-dir/bench.sqlite [batched_rows] [single_rows] [seconds_per_phase] [batch]
 * Defaults: 200000 batched rows, 5000 single-transaction rows, 20 s per phase, batch 1000.
 * The database file (and its -wal/-shm) is removed first and left behind afterwards.
 *
 * Prints one parseable line:
 *   RESULT sqlite batched_rows_per_s=.. single_tx_per_s=.. batched_rows=.. single_rows=.. ...
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long long wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void check(sqlite3 *db, int rc, const char *what) {
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
        fprintf(stderr, "sqlite_insert: %s: %s\n", what, sqlite3_errmsg(db));
        exit(1);
    }
}

static void exec(sqlite3 *db, const char *sql) {
    char *err = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
        fprintf(stderr, "sqlite_insert: %s: %s\n", sql, err ? err : "?");
        exit(1);
    }
}

/* Binds one row (metadata + the four bench columns) and steps the upsert. */
static void insert_row(sqlite3 *db, sqlite3_stmt *ins, const char *prefix, long long seq) {
    char id[64], name[64];
    snprintf(id, sizeof id, "%s-%lld", prefix, seq);
    snprintf(name, sizeof name, "item %lld", seq);
    sqlite3_bind_text(ins, 1, id, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(ins, 2, seq);
    sqlite3_bind_int64(ins, 3, wall_ms());
    sqlite3_bind_int(ins, 4, 0);
    sqlite3_bind_null(ins, 5);
    sqlite3_bind_text(ins, 6, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(ins, 7, seq % 1000);
    sqlite3_bind_double(ins, 8, 1.5);
    sqlite3_bind_int(ins, 9, 1);
    check(db, sqlite3_step(ins), "insert");
    sqlite3_reset(ins);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s DBFILE [batched_rows] [single_rows] [seconds_per_phase] [batch]\n", argv[0]);
        return 2;
    }
    const char *path = argv[1];
    long long batched_max = argc > 2 ? atoll(argv[2]) : 200000;
    long long single_max = argc > 3 ? atoll(argv[3]) : 5000;
    double limit_s = argc > 4 ? atof(argv[4]) : 20.0;
    long long batch = argc > 5 ? atoll(argv[5]) : 1000;
    if (batched_max < 1 || batched_max > 100000000 || single_max < 1 || single_max > 10000000 ||
        limit_s <= 0 || limit_s > 600 || batch < 1) {
        fprintf(stderr, "sqlite_insert: bounds: 1..1e8 batched rows, 1..1e7 single rows, 0<s<=600, batch>=1\n");
        return 2;
    }

    char aux[4096];
    unlink(path);
    snprintf(aux, sizeof aux, "%s-wal", path);
    unlink(aux);
    snprintf(aux, sizeof aux, "%s-shm", path);
    unlink(aux);

    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK) {
        fprintf(stderr, "sqlite_insert: open %s: %s\n", path, sqlite3_errmsg(db));
        return 1;
    }
    exec(db, "PRAGMA journal_mode=WAL");
    exec(db, "PRAGMA synchronous=FULL");
    exec(db,
         "CREATE TABLE \"t_bench\" ("
         " id TEXT NOT NULL PRIMARY KEY,"
         " seq INTEGER NOT NULL,"
         " updated_at INTEGER NOT NULL,"
         " deleted INTEGER NOT NULL DEFAULT 0,"
         " version INTEGER,"
         " c_name TEXT, c_qty INTEGER, c_price REAL, c_paid INTEGER"
         ") WITHOUT ROWID");
    exec(db, "CREATE UNIQUE INDEX \"t_bench_seq\" ON \"t_bench\"(seq)");

    sqlite3_stmt *ins, *begin, *commit;
    check(db, sqlite3_prepare_v2(db,
        "INSERT INTO \"t_bench\" (id, seq, updated_at, deleted, version, c_name, c_qty, c_price, c_paid) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET seq = excluded.seq, "
        "updated_at = excluded.updated_at, deleted = excluded.deleted, version = excluded.version, "
        "c_name = excluded.c_name, c_qty = excluded.c_qty, c_price = excluded.c_price, c_paid = excluded.c_paid",
        -1, &ins, NULL), "prepare insert");
    check(db, sqlite3_prepare_v2(db, "BEGIN IMMEDIATE", -1, &begin, NULL), "prepare begin");
    check(db, sqlite3_prepare_v2(db, "COMMIT", -1, &commit, NULL), "prepare commit");

    long long seq = 0;

    /* (a) transactions of `batch` rows */
    long long batched = 0;
    double t0 = now_s(), deadline = t0 + limit_s;
    while (batched < batched_max && now_s() < deadline) {
        check(db, sqlite3_step(begin), "begin");
        sqlite3_reset(begin);
        for (long long i = 0; i < batch && batched < batched_max; i++, batched++)
            insert_row(db, ins, "b", ++seq);
        check(db, sqlite3_step(commit), "commit");
        sqlite3_reset(commit);
    }
    double batched_s = now_s() - t0;

    /* (b) one transaction (one fsync) per row */
    long long single = 0;
    t0 = now_s();
    deadline = t0 + limit_s;
    while (single < single_max && now_s() < deadline) {
        check(db, sqlite3_step(begin), "begin");
        sqlite3_reset(begin);
        insert_row(db, ins, "s", ++seq);
        check(db, sqlite3_step(commit), "commit");
        sqlite3_reset(commit);
        single++;
    }
    double single_s = now_s() - t0;

    sqlite3_finalize(ins);
    sqlite3_finalize(begin);
    sqlite3_finalize(commit);
    sqlite3_close(db);

    printf("RESULT sqlite batched_rows_per_s=%.0f single_tx_per_s=%.1f batched_rows=%lld batched_s=%.2f "
           "single_rows=%lld single_s=%.2f batch=%lld sqlite_version=%s\n",
           batched / batched_s, single / single_s, batched, batched_s, single, single_s, batch,
           sqlite3_libversion());
    return 0;
}
