import DallyHTTP
import DallyCore
import DallyStore
import DallySyncEngine
import Prometheus

/// Everything `/stats` and `/metrics` report, gathered from the store, the hub and the
/// request counter at the moment of asking.
struct GatewayStats: Sendable {
    let store: ReplicaStore
    let objects: GatewayObjects
    let hub: ChangeHub
    let syncer: (any SyncControl)?
    let requests: RequestCounter
    let registry: PrometheusCollectorRegistry
    /// Cumulative counts, exported as counters.
    let counters: CounterExport
    let openFiles: OpenFileLimit
    /// When the gateway started, and the clock it reads: ms since 1970.
    let startedAt: Int64
    let now: @Sendable () -> Int64

    /// The `/stats` document.
    func document() async throws -> StatsDocument {
        let snapshot = try await store.snapshot()
        let outbox = Self.byTable(snapshot.outbox)
        let counts = store.counts
        let now = self.now()
        let schedules = syncer?.tableSchedules ?? [:]
        let syncStatus = syncer?.status
        let sync = syncStatus.map { SyncStats(status: $0, openConflicts: snapshot.openConflicts.values.reduce(0, +)) }
        let lifecycle = snapshot.lifecycle
        let policies = Dictionary(uniqueKeysWithValues: store.tableNames.compactMap { name in
            store.schema(name).map { (name, $0.policy) }
        })
        return StatsDocument(
            uptimeSeconds: (now - startedAt) / 1000, storeBytes: store.sizeOnDisk, storeMaxBytes: store.maxBytes, lastSeq: store.lastSeq,
            writer: WriterStats(store.writerTimings), waiters: (hub.waiting, hub.limit), openFiles: openFiles,
            sync: sync, uplinks: syncer?.uplinkSnapshots ?? [],
            tables: store.tableNames.map { table in
                (table, TableStats(
                    counts: counts[table] ?? TableCounts(), outbox: outbox[table], schedule: schedules[table],
                    lifecycle: lifecycle[table] ?? LifecycleLedger(), bound: store.schema(table)?.lifecycle ?? TableLifecycle(),
                    cloudVersion: syncer == nil ? nil : snapshot.cloudCursors[table], filling: snapshot.filling[table] ?? [],
                    declaration: syncStatus?.declarationDifferences[table], now: now))
            },
            objects: ObjectStats(
                totals: snapshot.objectTotals, chunks: try await objects.chunkStore.totals(),
                receiving: objects.intakes.count, counters: objects.counters.snapshot,
                backlog: ObjectBacklog(summaries: snapshot.objectUploads, policies: policies), now: now),
            requests: requests.entries)
    }

    /// The Prometheus text exposition: request counters as they run, gauges set now.
    func prometheus() async throws -> [UInt8] {
        let snapshot = try await store.snapshot()
        let outbox = Self.byTable(snapshot.outbox)
        let counts = store.counts
        let now = self.now()
        let schedules = syncer?.tableSchedules ?? [:]
        let lifecycle = snapshot.lifecycle
        let syncStatus = syncer?.status
        for table in store.tableNames {
            let c = counts[table] ?? TableCounts()
            let labels = [("table", table)]
            func gauge(_ name: String, _ help: String) -> Gauge {
                registry.gauge(name, help: help, labels: labels)
            }
            gauge("dally_table_rows", "Live rows in the table.").set(c.live)
            gauge("dally_table_tombstones", "Deleted rows kept as tombstones until synced.").set(c.tombstones)
            counters.counter("dally_table_writes_total", help: "Row writes accepted since start.", labels: labels, value: c.writes)
            counters.counter(
                "dally_table_coalesced_writes_total", help: "Writes folded into a row change not yet sent, since start.",
                labels: labels, value: c.coalesced)
            counters.counter(
                "dally_table_values_not_held_total",
                help: "Values from the cloud this table's column types cannot hold (the configurations disagree), since start.",
                labels: labels, value: c.notHeld)
            gauge("dally_outbox_pending", "Row changes waiting to go to the cloud.").set(outbox[table]?.pending ?? 0)
            let age = outbox[table]?.oldestFirstDirtyAt.map { Double(max(0, now - $0)) / 1000 } ?? 0
            gauge("dally_outbox_oldest_age_seconds", "Age of the oldest change waiting to go.").set(age)
            gauge("dally_outbox_bytes", "Bytes of row changes waiting to go.").set(outbox[table]?.bytes ?? 0)
            gauge("dally_outbox_in_flight", "Row changes sent and not yet acknowledged.")
                .set(outbox[table]?.inFlight ?? 0)
            let ledger = lifecycle[table] ?? LifecycleLedger()
            gauge("dally_table_horizon", "Sequence number of the newest purged tombstone; readers behind it resync.")
                .set(ledger.horizon)
            counters.counter(
                "dally_table_tombstones_purged_total", help: "Tombstones purged by compaction.", labels: labels,
                value: ledger.tombstonesPurged)
            counters.counter(
                "dally_table_retained_removed_total", help: "Synced rows removed locally by retain.", labels: labels,
                value: ledger.retainedRemoved)
            counters.counter(
                "dally_outbox_dropped_on_full_total", help: "Pending changes dropped by on_full = drop_oldest.",
                labels: labels, value: ledger.droppedOnFull)
            counters.counter(
                "dally_table_resyncs_total", help: "Pulls of the table from scratch after a resync page.",
                labels: labels, value: ledger.resyncs)
            if syncer != nil, let version = snapshot.cloudCursors[table] {
                gauge("dally_table_cloud_version", "The cloud version the table's pulls have reached.").set(version)
            }
            if let status = syncStatus {
                // Per direction: a table can hold its changes, its pulls, or both.
                let held = status.declarationDifferences[table]?.held ?? []
                for direction in ["uploads", "pulls"] {
                    registry.gauge(
                        "dally_table_declaration_held",
                        help: "1 while the table's uploads or pulls wait because its declaration differs from the cloud's.",
                        labels: labels + [("direction", direction)]
                    ).set(Int64(held.contains(direction) ? 1 : 0))
                }
            }
            if let schedule = schedules[table] {
                counters.counter(
                    "dally_table_deadline_misses_total", help: "Deadlines that passed with no allowed uplink available.",
                    labels: labels, value: schedule.deadlineMisses)
                gauge("dally_table_max_delay_seconds", "The table's upload max_delay.")
                    .set(Double(schedule.maxDelayMs) / 1000.0)
            }
        }
        for uplink in syncer?.uplinkSnapshots ?? [] {
            let labels = [("uplink", uplink.name), ("class", uplink.networkClass)]
            registry.gauge("dally_uplink_available", help: "1 while the uplink is available.", labels: labels)
                .set(Int64(uplink.available ? 1 : 0))
            registry.gauge("dally_uplink_usable", help: "1 while the uplink is available and not backing off.", labels: labels)
                .set(Int64(uplink.usable ? 1 : 0))
            for (name, value) in uplink.counters {
                counters.counter(
                    "dally_uplink_\(name)_total", help: "The uplink's \(name) since start, as in /stats uplinks.",
                    labels: labels, value: value)
            }
            // The link as measured from real transfers; 0 until measured.
            registry.gauge(
                "dally_uplink_throughput_up_bytes_per_second", help: "Measured upload throughput of the uplink's link.",
                labels: labels
            ).set(uplink.link.bytesPerSecondUp ?? 0)
            registry.gauge(
                "dally_uplink_throughput_down_bytes_per_second",
                help: "Measured download throughput of the uplink's link.", labels: labels
            ).set(uplink.link.bytesPerSecondDown ?? 0)
            registry.gauge(
                "dally_uplink_round_trip_seconds", help: "Measured round trip of a small request over the uplink.",
                labels: labels
            ).set((uplink.link.roundTripMs ?? 0) / 1000)
        }
        registry.gauge("dally_longpoll_waiters", help: "Long-poll requests waiting.").set(Int64(hub.waiting))
        registry.gauge("dally_longpoll_waiters_limit", help: "The most long-poll requests that may wait.")
            .set(Int64(hub.limit))
        registry.gauge("dally_store_bytes", help: "Size of the replica's files on disk.").set(store.sizeOnDisk)
        if let maxBytes = store.maxBytes {
            registry.gauge("dally_store_max_bytes", help: "store.max_bytes: local writes are refused at this size.").set(maxBytes)
        }
        let objectTotals = snapshot.objectTotals
        let chunkTotals = try await objects.chunkStore.totals()
        registry.gauge("dally_objects", help: "Objects the replica knows.").set(objectTotals.objects)
        registry.gauge("dally_objects_local", help: "Objects whose bytes are on this gateway.").set(objectTotals.local)
        registry.gauge(
            "dally_objects_refused_uploads", help: "Objects the cloud refused as too large, set aside until their rows' records are settled."
        ).set(objectTotals.refused)
        registry.gauge("dally_chunks", help: "Chunks in the gateway's chunk store.").set(Int64(chunkTotals.chunks))
        registry.gauge("dally_chunk_bytes", help: "Bytes in the gateway's chunk store.").set(chunkTotals.bytes)
        for field in objects.counters.snapshot.fields {
            counters.counter(
                "dally_objects_\(field.name)_total", help: "Objects' \(field.name) since start, as in /stats objects.",
                value: field.value)
        }
        registry.gauge("dally_store_last_seq", help: "The replica's latest change sequence number.").set(store.lastSeq)
        registry.gauge("dally_open_files_limit", help: "The process's soft limit on open files.")
            .set(Int64(openFiles.soft))
        if let status = syncStatus {
            for (name, value) in status.counters {
                if SyncStatus.levels.contains(name) {
                    registry.gauge("dally_sync_\(name)", help: "Sync's \(name), as in /stats sync.").set(value)
                } else {
                    counters.counter(
                        "dally_sync_\(name)_total", help: "Sync's \(name) since start, as in /stats sync.", value: value)
                }
            }
            if let offset = status.cloudClockOffsetMs {
                registry.gauge(
                    "dally_sync_cloud_clock_offset_seconds",
                    help: "The cloud's clock less this gateway's, from the Date of its last answer (whole seconds)."
                ).set(Double(offset) / 1000)
            }
        }
        return registry.emitToBuffer() + Array(WriterMetrics.text(store.writerTimings).utf8)
    }

    private static func byTable(_ summaries: [Outbox.Summary]) -> [String: Outbox.Summary] {
        Dictionary(uniqueKeysWithValues: summaries.map { ($0.table, $0) })
    }
}
