import DallyConfig
import DallyCore
import DallyObjects
import DallyStore
import DallySync
import Logging
import Synchronization

/// Brings objects from the cloud into the chunk store: the queued downloads of a wake, the
/// objects an atomic table's page needs before it is applied, and an object a client is
/// reading (``ObjectFetching``).
///
/// An object comes as its manifest, then the chunks not here already (shared with other
/// objects, or left by an interrupted fetch), each checked against its hash.
final class ObjectFetcher: Sendable {
    private let store: ReplicaStore
    private let chunks: any ChunkStore
    /// What arrived of chunk downloads that were cut, for the next attempt to resume.
    private let partials = PartialDownloads()
    private let intakes: ObjectIntakes
    private let schemas: [String: TableSchema]
    private let uplinks: [Uplink]
    private let fetchTimeout: Duration
    /// Sleeps on the engine's clock (for the on-demand timeout).
    private let sleep: @Sendable (Duration) async -> Void
    private let now: @Sendable () -> Int64
    private let stop: StopFlag
    private let logger: Logger
    private let counters = Mutex(ObjectFetchCounters())

    init(
        store: ReplicaStore, chunks: any ChunkStore, intakes: ObjectIntakes, schemas: [String: TableSchema],
        uplinks: [Uplink], fetchTimeout: Duration, sleep: @escaping @Sendable (Duration) async -> Void,
        now: @escaping @Sendable () -> Int64, stop: StopFlag, logger: Logger
    ) {
        self.store = store
        self.chunks = chunks
        self.intakes = intakes
        self.schemas = schemas
        self.uplinks = uplinks
        self.fetchTimeout = fetchTimeout
        self.sleep = sleep
        self.now = now
        self.stop = stop
        self.logger = logger
    }

    var counts: ObjectFetchCounters { counters.withLock { $0 } }

    /// Brings one object over `uplink`; false when the cloud does not hold it whole.
    func fetchObject(_ hash: ContentHash, on uplink: Uplink) async throws -> Bool {
        let (found, asked) = try await uplink.client.manifest(of: hash)
        record(asked, on: uplink)
        guard let manifest = found else { return false }
        // Chunks stored before the object is recorded are a receive under way for GC.
        try await intakes.receiving(startedAt: now()) {
            try await fetchChunks(of: manifest, on: uplink)
            try await store.objectFetched(manifest, now: now())
        }
        counters.withLock { $0.fetched += 1 }
        return true
    }

    private func fetchChunks(of manifest: ObjectManifest, on uplink: Uplink) async throws {
        let unique = Array(Set(manifest.chunks.map(\.hash)))
        let here = try await chunks.present(unique)
        for hash in unique where !here.contains(hash) {
            try uplink.requireUsable(at: now(), stop: stop)
            let (bytes, traffic) = try await uplink.client.chunk(hash, partials: partials)
            _ = try await chunks.put(hash, bytes: bytes, now: now())
            if traffic.resumedDown > 0 { uplink.client.watch.model.resumed(traffic.resumedDown) }
            record(traffic, on: uplink) { counters in
                counters.chunksFetched += 1
                counters.bytesFetched += Int64(bytes.count)
                counters.bytesNotRefetched += Int64(traffic.resumedDown)
            }
        }
    }

    private func record(
        _ traffic: CloudClient.Traffic, on uplink: Uplink, _ update: (inout ObjectFetchCounters) -> Void = { _ in }
    ) {
        uplink.recordAnswer(traffic, now: now())
        counters.withLock { counters in
            counters.traffic.add(traffic)
            update(&counters)
        }
    }

    /// Fetches the queued objects of `tables` (their download policy allows this uplink).
    func downloadObjects(on uplink: Uplink, tables: Set<String>) async throws {
        for download in try await store.objectDownloads(tables: tables) {
            try uplink.requireUsable(at: now(), stop: stop)
            do {
                if try await !fetchObject(download.hash, on: uplink) {
                    // Its writer has not sent it yet: look again a period from now.
                    try await store.deferObjectDownload(download.hash, now: now())
                }
            } catch CloudError.refused(404, _, let message) {
                // The cloud lists the object but cannot serve a chunk of it (its chunk store
                // lost one, or was restored from an older backup): asked again a period from
                // now, and the objects queued after it go meanwhile instead of this one
                // failing every wake's walk.
                counters.withLock { $0.fetchFailures += 1 }
                logger.warning(
                    "the cloud cannot serve an object it lists; fetching it again a period from now",
                    metadata: ["object": "\(download.hash)", "uplink": "\(uplink.name)", "error": "\(message)"])
                try await store.deferObjectDownload(download.hash, now: now())
            }
        }
    }

    /// Before a page of an `atomic_sync` table is applied, fetches every object its rows
    /// reference that is not here, so that no row of such a table is ever visible without its
    /// objects. The cloud accepted those rows only once their objects were whole, so a missing
    /// one is an error that fails the cycle (the page is applied at the next).
    func fetchAtomicObjects(of pages: [ChangePage], on uplink: Uplink) async throws {
        var wanted: [ContentHash] = []
        for page in pages {
            guard let schema = schemas[page.table], schema.policy.atomicSync else { continue }
            let columns = page.columns.indices.filter { schema.column(named: page.columns[$0])?.type == .object }
            guard !columns.isEmpty else { continue }
            for row in page.rows where !row.deleted {
                for index in columns where index < row.values.count {
                    if let reference = try? ObjectReference(json: row.values[index], field: page.columns[index]) {
                        wanted.append(reference.hash)
                    }
                }
            }
        }
        guard !wanted.isEmpty else { return }
        let local = try await store.localObjects(wanted)
        for hash in Set(wanted).subtracting(local) {
            try uplink.requireUsable(at: now(), stop: stop)
            guard try await fetchObject(hash, on: uplink) else { throw ObjectTransferError.notInCloud(hash) }
        }
    }

    // MARK: - On demand

    /// Fetches an object a client is reading, over the cheapest usable uplink the table's
    /// `download_objects` policy allows, waiting at most `objects.fetch_timeout`.
    ///
    /// - Throws: ``DallyError`` `object_unavailable` when no allowed uplink is usable or the
    ///   cloud does not hold the object (yet), `object_fetch_timeout` when the fetch takes too
    ///   long (it goes on in the background; a later read finds the chunks it brought).
    func fetchOnDemand(_ reference: ObjectReference, table: String) async throws(DallyError) {
        guard let schema = schemas[table] else { throw DallyError(.unknownTable, "no table named '\(table)'") }
        let classes = schema.policy.downloadObjects.networks
        guard let uplink = uplinks.cheapestUsable(among: classes, at: now()) else {
            counters.withLock { $0.fetchFailures += 1 }
            throw DallyError(
                .objectUnavailable,
                "object \(reference.hash) is not on this gateway yet, and no network its table's policy allows (\(classes.joined(separator: ", "))) is up")
        }
        counters.withLock { $0.onDemandFetches += 1 }
        let fetch = Task { try await self.fetchObject(reference.hash, on: uplink) }
        let (sleep, timeout) = (self.sleep, fetchTimeout)
        let outcome = await withTaskGroup(of: Result<Bool, any Error>?.self) { group in
            group.addTask { await fetch.result }
            group.addTask {
                await sleep(timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        if case .success(true) = outcome { return }
        counters.withLock { $0.fetchFailures += 1 }
        switch outcome {
        case .success(true): return
        case .success(false):
            throw DallyError(.objectUnavailable, "the cloud does not hold object \(reference.hash) yet; its writer has not sent it")
        case .failure(let error):
            throw DallyError(.objectUnavailable, "fetching object \(reference.hash) over \(uplink.name) failed: \(error)")
        case nil:
            throw DallyError(
                .objectFetchTimeout,
                "object \(reference.hash) did not arrive within objects.fetch_timeout (\(DurationText.format(timeout)))")
        }
    }
}
