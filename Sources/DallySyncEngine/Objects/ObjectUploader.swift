import DallyCore
import DallyObjects
import DallyStore
import Logging
import Synchronization

/// Sends queued objects to the cloud, chunk by chunk, resuming where an interrupted walk
/// stopped.
///
/// Per object: ask which chunks the cloud lacks, send those (two at a time on a long link),
/// then the manifest. The ask is also how a transfer resumes: after a drop, a restart or a
/// switch to another uplink the chunks that arrived are not missing any more, so they are not
/// sent again, and a chunk cut mid-way goes on from the byte the cloud kept (``ChunkUpload``).
/// Progress (``ChunkWalk``) is persisted after every chunk, so a resumed walk asks only about
/// the rest.
final class ObjectUploader: Sendable {
    /// How one object's walk ended.
    enum Sending {
        /// The cloud holds it whole.
        case sent
        /// It left the queue during the walk; the cloud keeps what arrived until its GC.
        case withdrawn
    }

    /// How a walk over the queued objects ended.
    enum Outcome: Equatable {
        /// Every object was tried; this many are now whole in the cloud.
        case finished(Int)
        /// Rows fell due on another uplink; the walk stopped between chunks to let the
        /// scheduler wake it, and resumes at the next wake that may carry objects.
        case paused(for: String)
    }

    let store: ReplicaStore
    private let chunks: any ChunkStore
    private let now: @Sendable () -> Int64
    private let logger: Logger
    private let stop: StopFlag
    let counters = Mutex(ObjectUploadCounters())

    init(store: ReplicaStore, chunks: any ChunkStore, now: @escaping @Sendable () -> Int64, logger: Logger, stop: StopFlag) {
        self.store = store
        self.chunks = chunks
        self.now = now
        self.logger = logger
        self.stop = stop
    }

    var counts: ObjectUploadCounters { counters.withLock { $0 } }

    /// Sends every object of `tables` the cloud may lack, oldest first, over `uplink`.
    ///
    /// The walk stops (throwing) when the uplink stops being usable or the engine stops,
    /// leaving what was sent. An object withdrawn meanwhile (a write let go of it before any
    /// row naming it left) is dropped at the next chunk. `betweenChunks` runs after every chunk
    /// sent (the cycle sends rows that fall due during a long walk there); it throws
    /// ``WalkPause`` to pause the walk.
    ///
    /// `ahead` is the first object's ask made beforehand (``askAhead(on:tables:rowTables:)``),
    /// if any.
    func upload(
        on uplink: Uplink, tables: Set<String>, ahead: EarlyAsk? = nil, betweenChunks: () async throws -> Void
    ) async throws -> Outcome {
        var finished = 0
        var ahead = ahead
        // A first chunk sent beside the ask that its walk did not take over (the walk of
        // another object, or none) is cut once that walk ends; one taken over has ended with it.
        // So is a manifest sent beside it.
        let chunkAhead = ahead?.firstChunk
        let manifestAhead = ahead?.manifest
        defer {
            chunkAhead?.sending.cancel()
            manifestAhead?.cancel()
        }
        do {
            for pending in try await store.objectUploads(tables: tables) {
                // The early ask is of the walk's first object, once: after it, it is stale.
                defer {
                    chunkAhead?.sending.cancel()
                    manifestAhead?.cancel()
                    ahead = nil
                }
                if try await upload(pending, on: uplink, ahead: ahead, betweenChunks: betweenChunks) { finished += 1 }
            }
        } catch let pause as WalkPause {
            counters.withLock { $0.walksPaused += 1 }
            logger.info(
                "pausing an object upload: rows are due on another uplink",
                metadata: ["uplink": "\(uplink.name)", "rows_call_for": "\(pause.uplink)"])
            return .paused(for: pause.uplink)
        }
        return .finished(finished)
    }

    /// One queued object; whether the cloud now holds it whole.
    private func upload(
        _ pending: PendingObjectUpload, on uplink: Uplink, ahead: EarlyAsk?, betweenChunks: () async throws -> Void
    ) async throws -> Bool {
        let upload = pending.upload
        guard let manifest = pending.manifest else {
            logger.error(
                "an object waiting to go up has no chunk list; it cannot be sent",
                metadata: ["object": "\(upload.hash)", "table": "\(upload.table)"])
            return false
        }
        try uplink.requireUsable(at: now(), stop: stop)
        let sending: Sending
        do {
            sending = try await send(pending, manifest, on: uplink, ahead: ahead, betweenChunks: betweenChunks)
        } catch CloudError.refused(413, .objectTooLarge, let message) {
            // Too large for the cloud for good: set aside, and its rows' records tell the app,
            // instead of failing every walk here (and sending its chunks again each time) while
            // the objects queued after it never go.
            let told = try await store.refuseObjectUpload(manifest.hash, code: DallyError.Code.objectTooLarge.rawValue, message: message)
            logger.error(
                "the cloud refused an object as too large; set aside until its rows' records are settled",
                metadata: ["object": "\(manifest.hash)", "table": "\(upload.table)", "rows": "\(told)", "error": "\(message)"])
            return false
        }
        switch sending {
        case .sent:
            try await store.objectUploaded(manifest.hash)
            counters.withLock { $0.uploaded += 1 }
            return true
        case .withdrawn:
            counters.withLock { $0.withdrawn += 1 }
            logger.info(
                "an object no row wants any more was not sent (further)",
                metadata: ["object": "\(manifest.hash)", "table": "\(upload.table)"])
            return false
        }
    }

    /// Walks one object: ask, missing chunks in manifest order, manifest. Should the cloud
    /// have collected an early chunk meanwhile, the manifest's `missing_chunks` answer sends
    /// the walk round once more over every chunk.
    private func send(
        _ pending: PendingObjectUpload, _ manifest: ObjectManifest, on uplink: Uplink, ahead: EarlyAsk?,
        betweenChunks: () async throws -> Void
    ) async throws -> Sending {
        // The ask made beside the rows, with the first chunk, may have begun the walk already.
        let ahead = ahead?.object == manifest.hash ? ahead : nil
        let begunAhead = ahead?.begun == true
        if !begunAhead { guard try await store.beginObjectUpload(manifest.hash) else { return .withdrawn } }
        let resuming = pending.upload.attempts > (begunAhead ? 1 : 0)
        var walk = ChunkWalk(manifest: manifest, chunksDone: pending.chunksDone)
        for round in 0..<2 {
            let asking = walk.asking(round: round)
            var (found, partial): ([ContentHash], [ContentHash: Int]) = ([], [:])
            var chunkAhead = round == 0 ? ahead?.firstChunk : nil
            if round == 0, let ahead, ahead.asking == asking {
                (found, partial) = (ahead.missing, ahead.partial)
                counters.withLock { $0.asksAhead += 1 }
            } else if !asking.isEmpty {
                (found, partial) = try await missingChunks(asking, on: uplink)
            }
            let missing = walk.inOrder(found)
            if let chunk = chunkAhead, !Self.takesOver(chunk, missing: missing) || ahead?.asking != asking {
                cut(chunk)
                chunkAhead = nil
            }
            if round == 0 {
                noteFirstAsk(asking: asking, missing: missing, walk: walk, resuming: resuming, manifest, on: uplink)
            }
            if walk.confirm(missing: missing, round: round) {
                guard try await store.recordObjectBytesSent(manifest.hash, bytes: 0, chunksDone: walk.done) else {
                    return .withdrawn
                }
            }
            // Where the link's round trip matters (``LinkModel/transfersAtOnce(bodyBytes:)``), two
            // chunks on the wire: the next one's bytes flow while the one before waits for its
            // answer, instead of the link idling a round trip per chunk (12 for 3 MiB). A slot
            // frees as either lands; each is settled (progress persisted, rows due sent) in
            // manifest order; a cut leaves the partial chunks, each resumed from the byte the
            // cloud kept.
            var wire = ChunksOnTheWire()
            // A manifest sent beside the ask waits at the cloud as one sent with the last chunk.
            var early = round == 0 && ahead?.asking == asking ? ahead?.manifest : nil
            defer {
                wire.cancelAll()
                early?.cancel()
            }
            var oldest = 0
            func settle(_ bytes: Int) async throws -> Bool {
                walk.sent(oldest, of: missing)
                oldest += 1
                return try await store.recordObjectBytesSent(manifest.hash, bytes: Int64(bytes), chunksDone: walk.done)
            }
            for (index, hash) in missing.enumerated() {
                try uplink.requireUsable(at: now(), stop: stop)
                let offset = partial[hash] ?? 0
                if index == 0, let chunk = chunkAhead {
                    wire.adopt(chunk.sending)
                } else {
                    // Queued before the next chunk and the manifest, in manifest order
                    // (``ConnectionOrder``): after a cut the first, the largest left, went on a
                    // new connection while the others took the open ones.
                    wire.adopt(
                        await ConnectionOrder.start { queued in
                            try await self.put(chunk: hash, from: offset, of: manifest, on: uplink, queued: queued)
                        })
                }
                let window = uplink.client.watch.model.transfersAtOnce(bodyBytes: Int(walk.bytes(of: [hash])))
                let last = index == missing.count - 1
                if last, window > 1, early == nil {
                    // The same reasoning for the manifest: sent now, it waits at the cloud for
                    // the chunks on the wire, and the object is recorded as they land instead
                    // of a round trip after their answers.
                    early = sendEarly(manifest, on: uplink)
                }
                while true {
                    while let bytes = try await wire.settleIfLanded() {
                        guard try await settle(bytes) else { return .withdrawn }
                        do {
                            try await betweenChunks()
                        } catch let pause as WalkPause {
                            // The walk pauses between chunks: the ones on the wire finish first.
                            while !wire.isEmpty { guard try await settle(try await wire.settleOldest()) else { return .withdrawn } }
                            throw pause
                        }
                    }
                    if last ? wire.isEmpty : wire.going < window { break }
                    try await wire.awaitLanding()
                }
            }
            switch await putManifest(manifest, early: early, on: uplink) {
            case .success(let traffic):
                record(traffic, on: uplink)
                return .sent
            case .failure(.refused(409, .missingChunks, let message)) where round == 0:
                logger.warning(
                    "the cloud lacks chunks of an object just sent; asking again",
                    metadata: ["object": "\(manifest.hash)", "message": "\(message)"])
            case .failure(let error):
                throw error
            }
        }
        throw ObjectTransferError.manifestRefused(manifest.hash)
    }

    // MARK: - Protocol steps, each with its counters

    /// Sends `manifest` while the object's last chunks are on the wire: the cloud waits for
    /// them up to twice the time a request is sized to take (a chunk's frames each take about
    /// `target_request_time`).
    func sendEarly(_ manifest: ObjectManifest, on uplink: Uplink) -> Task<CloudClient.Traffic, any Error> {
        counters.withLock { $0.manifestsEarly += 1 }
        let wait = uplink.config.timings.targetRequestTime * 2
        return Task { try await uplink.client.put(manifest: manifest, waitingUpTo: wait) }
    }

    /// The manifest's answer: the early one's, unless it found chunks still missing when its
    /// wait ran out (or a cloud that does not wait) or its connection failed while the chunks
    /// got through; then, the chunks being in, the manifest goes again without a new ask.
    /// (A Result rather than a typed catch pattern: the latter crashes this compiler.)
    private func putManifest(
        _ manifest: ObjectManifest, early: Task<CloudClient.Traffic, any Error>?, on uplink: Uplink
    ) async -> Result<CloudClient.Traffic, CloudError> {
        if let early {
            let answer: Result<CloudClient.Traffic, CloudError>
            do {
                answer = .success(try await early.value)
            } catch let error as CloudError {
                answer = .failure(error)
            } catch {
                answer = .failure(.unreachable("the manifest was not sent: \(error)"))
            }
            switch answer {
            case .failure(.refused(409, .missingChunks, _)), .failure(.unreachable):
                counters.withLock { $0.manifestsResent += 1 }
            default:
                return answer
            }
        }
        do {
            return .success(try await uplink.client.put(manifest: manifest))
        } catch {
            return .failure(error)
        }
    }

    /// The missing chunks, and where the cloud's partial copies of cut ones end.
    func missingChunks(_ asking: [ContentHash], on uplink: Uplink) async throws
        -> ([ContentHash], [ContentHash: Int])
    {
        let (missing, partial, traffic) = try await uplink.client.missingChunks(asking)
        record(traffic, on: uplink) { $0.chunksAsked += Int64(asking.count) }
        return (missing, partial)
    }

    /// Sends one chunk from the chunk store, from byte `offset` of its body on the wire (what
    /// the cloud kept of a cut upload); its size. `queued` as in ``ChunkUpload/send(from:over:queued:)``.
    private func put(
        chunk hash: ContentHash, from offset: Int, of manifest: ObjectManifest, on uplink: Uplink,
        queued: (@Sendable () -> Void)? = nil
    ) async throws -> Int {
        try await put(try await prepare(chunk: hash, of: manifest), from: offset, on: uplink, queued: queued)
    }

    /// One chunk read from the chunk store and coded as it goes on the wire.
    func prepare(chunk hash: ContentHash, of manifest: ObjectManifest) async throws -> ChunkUpload {
        guard let bytes = try await chunks.get(hash) else {
            throw ObjectTransferError.chunkLost(hash, object: manifest.hash)
        }
        return ChunkUpload(hash: hash, bytes: bytes)
    }

    /// Sends `upload` from byte `offset` of its body on the wire; the chunk's size. `queued`
    /// as in ``ChunkUpload/send(from:over:queued:)``.
    func put(
        _ upload: ChunkUpload, from offset: Int, on uplink: Uplink, queued: (@Sendable () -> Void)? = nil
    ) async throws -> Int {
        let hash = upload.hash
        let traffic = try await upload.send(from: offset, over: uplink.client, queued: queued)
        if offset > 0 {
            uplink.client.watch.model.resumed(offset)
            logger.info(
                "resuming a cut chunk upload", metadata: ["chunk": "\(hash)", "from_byte": "\(offset)", "uplink": "\(uplink.name)"])
        }
        record(traffic, on: uplink) { counters in
            counters.bytesNotResent += Int64(offset)
            counters.chunksSent += 1
            counters.chunkBytesSent += Int64(upload.rawBytes)
            counters.chunkBytesOnWire += Int64(traffic.sentCompressed)
        }
        return upload.rawBytes
    }

    private func record(
        _ traffic: CloudClient.Traffic, on uplink: Uplink, _ update: (inout ObjectUploadCounters) -> Void = { _ in }
    ) {
        uplink.recordAnswer(traffic, now: now())
        counters.withLock { counters in
            counters.traffic.add(traffic)
            update(&counters)
        }
    }

    /// Counts what the first ask found already there (chunk reuse, or a resumed walk).
    private func noteFirstAsk(
        asking: [ContentHash], missing: [ContentHash], walk: ChunkWalk, resuming: Bool, _ manifest: ObjectManifest,
        on uplink: Uplink
    ) {
        let missingSet = Set(missing)
        let present = asking.filter { !missingSet.contains($0) }
        let presentBytes = walk.bytes(of: present)
        counters.withLock { counters in
            counters.chunksSkipped += Int64(present.count)
            counters.bytesSkipped += presentBytes
            if resuming {
                counters.resumedTransfers += 1
                counters.bytesNotResent += presentBytes + walk.bytesDone
            }
        }
        guard resuming else { return }
        logger.info(
            "resuming an object upload",
            metadata: [
                "object": "\(manifest.hash)", "chunks_there": "\(walk.done + present.count)",
                "chunks_missing": "\(missing.count)", "chunks_asked": "\(asking.count)", "uplink": "\(uplink.name)",
            ])
    }
}
