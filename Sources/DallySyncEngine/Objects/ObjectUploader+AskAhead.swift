import DallyObjects
import DallyStore

/// The ask made beside the wake's rows (``EarlyAsk``), with the first chunk, and the manifest
/// when that chunk is the whole object, sent beside it on a long link.
extension ObjectUploader {
    /// Asks which chunks of the first object a walk over `tables` would send lacks, for the
    /// walk to use (``EarlyAsk``); nil when there is nothing to ask or the ask failed (the walk
    /// then asks itself).
    ///
    /// On a long link, and when the rows of `rowTables` that wait are few, the object's first
    /// chunk goes beside the ask (``EarlyAsk/firstChunk``): the ask's round trip would
    /// otherwise leave the link idle (a 0.5 MiB object at 128,000 B/s with a 600 ms round trip
    /// took 5.33 s, 1.30× its bytes' time, against 4.73 s, 1.155×; docs/BENCHMARKS.md). When
    /// that chunk is the whole object and crosses quickly, the manifest goes with them, to wait
    /// at the cloud for the chunk: otherwise it would leave once the ask is answered, and the
    /// object be recorded a round trip after its chunk landed.
    ///
    /// `chunkStarted` is called once the first chunk's upload has begun, or once it is known
    /// that none goes: the wake sends its rows after it, so that the chunk, whose bytes fill
    /// the link, takes the connection the pool holds open and the small requests the new ones
    /// (on a link whose handshake costs a round trip, a chunk behind one left the link idle
    /// that long).
    func askAhead(
        on uplink: Uplink, tables: Set<String>, rowTables: Set<String>?, chunkStarted: @Sendable () -> Void = {}
    ) async -> EarlyAsk? {
        var started = false
        defer { if !started { chunkStarted() } }
        guard let first = try? await store.objectUploads(tables: tables, limit: 1).first, let manifest = first.manifest else {
            return nil
        }
        var walk = ChunkWalk(manifest: manifest, chunksDone: first.chunksDone)
        let asking = walk.asking(round: 0)
        guard let firstHash = asking.first else { return nil }
        var chunk: EarlyAsk.ChunkAhead?
        var manifestAhead: Task<CloudClient.Traffic, any Error>?
        let begun = await sendsBesideTheAsk(first, rowTables: rowTables, on: uplink)
        if begun {
            // Read once; a chunk lost from the store fails the upload, as it would have.
            let prepared: Result<ChunkUpload, any Error>
            do {
                prepared = .success(try await prepare(chunk: firstHash, of: manifest))
            } catch {
                prepared = .failure(error)
            }
            // Queued for a connection before the ask and the rows ask for theirs: it should
            // take the one the pool holds open (``ConnectionOrder``).
            let sending = await ConnectionOrder.start { queued in
                try await self.put(prepared.get(), from: 0, on: uplink, queued: queued)
            }
            chunk = EarlyAsk.ChunkAhead(hash: firstHash, sending: sending)
            if asking == [firstHash],
                uplink.client.watch.model.transfersAtOnce(bodyBytes: Int(walk.bytes(of: asking))) > 1
            {
                manifestAhead = sendEarly(manifest, on: uplink)
                counters.withLock { $0.manifestsAhead += 1 }
            }
        }
        started = true
        chunkStarted()
        guard let (missing, partial) = try? await missingChunks(asking, on: uplink) else {
            chunk?.sending.cancel()
            manifestAhead?.cancel()
            return nil
        }
        if let sent = chunk {
            counters.withLock { $0.chunksAhead += 1 }
            // The cloud has the chunk: cut at once, not when the walk begins.
            if !Self.takesOver(sent, missing: walk.inOrder(missing)) {
                cut(sent)
                chunk = nil
            }
        }
        return EarlyAsk(
            object: manifest.hash, asking: asking, missing: missing, partial: partial, firstChunk: chunk,
            manifest: manifestAhead, begun: begun)
    }

    /// Whether the walk takes over `chunk`, sent beside the ask: when it is the first chunk
    /// the cloud lacks (`missing`, in manifest order). A partial copy the answer names for it
    /// is most often that very upload's first bytes, arrived before the ask was read; cutting
    /// it would lose what the sockets hold and send the chunk again (a 0.5 MiB object at
    /// 16,000 B/s went up 2.5 times so, once).
    static func takesOver(_ chunk: EarlyAsk.ChunkAhead, missing: [ContentHash]) -> Bool {
        missing.first == chunk.hash
    }

    /// Cuts a chunk sent beside the ask that the cloud turned out to have already. What it
    /// cost: the bytes the link carried before the answer came, and those the sockets' buffers
    /// held when it was closed (a closed connection still delivers them).
    func cut(_ chunk: EarlyAsk.ChunkAhead) {
        chunk.sending.cancel()
        counters.withLock { $0.chunksAheadCut += 1 }
    }

    /// The most bytes of rows waiting for which the first chunk still goes beside the ask:
    /// rows go first, and a chunk sharing the link with a backlog of them would slow it.
    static let chunkBesideRowsBytes: Int64 = 16_384

    /// Whether `pending`'s first chunk goes beside its ask, and if so, its walk begun.
    ///
    /// Only on a long link (``LinkModel/roundTripIsLong``: on a LAN the ask costs nothing),
    /// only for a walk never begun (one begun before resumes where the cloud's partial copy
    /// ends, which only the answer tells), and only with few rows of `rowTables` (nil: all)
    /// waiting.
    private func sendsBesideTheAsk(_ pending: PendingObjectUpload, rowTables: Set<String>?, on uplink: Uplink) async -> Bool {
        guard pending.upload.attempts == 0, pending.chunksDone == 0, uplink.client.watch.model.roundTripIsLong,
            let summaries = try? await store.outboxSummary()
        else { return false }
        let rowBytes = summaries.filter { rowTables?.contains($0.table) ?? true }.reduce(Int64(0)) { $0 + $1.bytes }
        guard rowBytes <= Self.chunkBesideRowsBytes else { return false }
        return (try? await store.beginObjectUpload(pending.upload.hash)) == true
    }
}
