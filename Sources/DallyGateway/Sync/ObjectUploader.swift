import DallyObjects
import DallyStore
import Foundation

extension Syncer {
    /// Sends every object of `tables` the cloud may lack, oldest first, over `uplink`; the
    /// objects it finished.
    ///
    /// Per object: ask which chunks the cloud lacks, send those, then the manifest. The ask is
    /// also how a transfer resumes: after a drop, a restart or a switch to another uplink the
    /// chunks that arrived are not missing any more, so they are not sent again. The walk stops
    /// (throwing) when the uplink stops being usable or the syncer stops, leaving what was sent.
    /// An object withdrawn meanwhile (a write let go of it before any row naming it left) is
    /// dropped at the next chunk. `betweenChunks` runs after every chunk sent (the cycle sends
    /// rows that fall due during a long walk there).
    func uploadObjects(
        on uplink: Uplink, tables: Set<String>, betweenChunks: () async throws -> Void
    ) async throws -> Int {
        var finished = 0
        for pending in try await store.objectUploads(tables: tables) {
            let upload = pending.upload
            guard let manifest = pending.manifest else {
                logger.error(
                    "an object waiting to go up has no chunk list; it cannot be sent",
                    metadata: ["object": "\(upload.hash)", "table": "\(upload.table)"])
                continue
            }
            try checkStillUsable(uplink)
            switch try await send(pending, manifest, on: uplink, betweenChunks: betweenChunks) {
            case .sent:
                try await store.objectUploaded(manifest.hash)
                finished += 1
                state.withLock { $0.status.objects.uploaded += 1 }
            case .withdrawn:
                state.withLock { $0.status.objects.withdrawn += 1 }
                logger.info(
                    "an object no row wants any more was not sent (further)",
                    metadata: ["object": "\(manifest.hash)", "table": "\(upload.table)"])
            }
        }
        return finished
    }

    /// How one object's walk ended.
    private enum Sending {
        /// The cloud holds it whole.
        case sent
        /// It left the queue during the walk; the cloud keeps what arrived until its GC.
        case withdrawn
    }

    /// Walks one object: ask, missing chunks in manifest order, manifest.
    ///
    /// Progress is kept as `chunks_done`, the length of the prefix of the object's distinct
    /// chunks known to be in the cloud (present when asked, or sent): a resumed walk asks only
    /// about the rest, so a 2 GiB object paused near its end costs an ask of a few hashes, not
    /// of 8,000. Should the cloud have collected an early chunk meanwhile, the manifest's
    /// `missing_chunks` answer sends the walk round again over every chunk.
    private func send(
        _ pending: PendingObjectUpload, _ manifest: ObjectManifest, on uplink: Uplink,
        betweenChunks: () async throws -> Void
    ) async throws -> Sending {
        guard try await store.beginObjectUpload(manifest.hash) else { return .withdrawn }
        let resuming = pending.upload.attempts > 0
        var sizes: [ContentHash: Int] = [:]
        var unique: [ContentHash] = []
        for chunk in manifest.chunks where sizes.updateValue(chunk.size, forKey: chunk.hash) == nil {
            unique.append(chunk.hash)
        }
        let position = Dictionary(unique.enumerated().map { ($1, $0) }) { first, _ in first }
        var done = min(max(pending.chunksDone, 0), unique.count)
        // Two rounds: a chunk the cloud collected between the ask and the manifest (or a
        // manifest refused for a missing chunk) is asked for and sent once more.
        for round in 0..<2 {
            let asking = round == 0 ? Array(unique[done...]) : unique
            if round > 0 { done = 0 }
            var missing: [ContentHash] = []
            if !asking.isEmpty {
                let (answer, asked) = try await uplink.client.missingChunks(asking)
                uplink.recordAnswer(asked, now: now())
                state.withLock { state in
                    state.status.record(asked)
                    state.status.objects.chunksAsked += Int64(asking.count)
                }
                missing = answer.sorted { (position[$0] ?? .max) < (position[$1] ?? .max) }
            }
            if round == 0 {
                let missingSet = Set(missing)
                let present = asking.filter { !missingSet.contains($0) }
                let presentBytes = present.reduce(Int64(0)) { $0 + Int64(sizes[$1] ?? 0) }
                let earlierBytes = unique[..<done].reduce(Int64(0)) { $0 + Int64(sizes[$1] ?? 0) }
                state.withLock { state in
                    state.status.objects.chunksSkipped += Int64(present.count)
                    state.status.objects.bytesSkipped += presentBytes
                    if resuming {
                        state.status.objects.resumedTransfers += 1
                        state.status.objects.bytesNotResent += presentBytes + earlierBytes
                    }
                }
                if resuming {
                    logger.info(
                        "resuming an object upload",
                        metadata: [
                            "object": "\(manifest.hash)", "chunks_there": "\(done + present.count)",
                            "chunks_missing": "\(missing.count)", "chunks_asked": "\(asking.count)",
                            "uplink": "\(uplink.name)",
                        ])
                }
            }
            // What precedes the first missing chunk is there; after each chunk sent, so is
            // everything up to the next missing one.
            let confirmed = missing.first.flatMap { position[$0] } ?? unique.count
            if confirmed > done || round > 0 {
                done = confirmed
                guard try await store.recordObjectBytesSent(manifest.hash, bytes: 0, chunksDone: done) else {
                    return .withdrawn
                }
            }
            for (index, hash) in missing.enumerated() {
                try checkStillUsable(uplink)
                guard let bytes = try await chunks.get(hash) else {
                    throw ObjectTransferError.chunkLost(hash, object: manifest.hash)
                }
                let traffic = try await uplink.client.put(chunk: bytes, hash: hash)
                uplink.recordAnswer(traffic, now: now())
                done = index + 1 < missing.count ? (position[missing[index + 1]] ?? done) : unique.count
                let stillQueued = try await store.recordObjectBytesSent(
                    manifest.hash, bytes: Int64(bytes.count), chunksDone: done)
                state.withLock { state in
                    state.status.record(traffic)
                    state.status.objects.chunksSent += 1
                    state.status.objects.chunkBytesSent += Int64(bytes.count)
                    state.status.objects.chunkBytesOnWire += Int64(traffic.sentCompressed)
                }
                guard stillQueued else { return .withdrawn }
                try await betweenChunks()
            }
            // (A Result rather than a typed catch pattern: the latter crashes this compiler.)
            let sent: Result<CloudClient.Traffic, CloudError>
            do {
                sent = .success(try await uplink.client.put(manifest: manifest))
            } catch {
                sent = .failure(error)
            }
            switch sent {
            case .success(let traffic):
                uplink.recordAnswer(traffic, now: now())
                state.withLock { $0.status.record(traffic) }
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

    /// Throws when `uplink` may not be used any more (its availability changed mid-transfer)
    /// or the syncer is stopping: the transfer pauses, and resumes at the next wake.
    func checkStillUsable(_ uplink: Uplink) throws {
        if stopped { throw CancellationError() }
        guard uplink.isUsable(at: now()) else { throw ObjectTransferError.uplinkWentAway(uplink.name) }
    }
}

/// Why an object transfer stopped.
enum ObjectTransferError: Error, CustomStringConvertible {
    case uplinkWentAway(String)
    case chunkLost(ContentHash, object: ContentHash)
    case manifestRefused(ContentHash)
    case notInCloud(ContentHash)

    var description: String {
        switch self {
        case .uplinkWentAway(let name): "uplink \(name) stopped being usable during an object transfer"
        case .chunkLost(let chunk, let object): "chunk \(chunk) of object \(object) is not in the chunk store"
        case .manifestRefused(let object): "the cloud refused the manifest of object \(object) twice (missing chunks)"
        case .notInCloud(let object): "the cloud does not hold object \(object), which an atomic row references"
        }
    }
}
