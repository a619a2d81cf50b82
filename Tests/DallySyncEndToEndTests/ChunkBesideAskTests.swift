import DallyCore
import DallyFrugal
import DallyTestSupport
import Testing

/// An object's first chunk sent beside its ask on a long link (``EarlyAsk/firstChunk``): the
/// link carries the chunk's bytes during the ask's round trip, and when the cloud has the
/// chunk the upload is cut as the answer comes.
@Suite(.serialized) struct ChunkBesideAskTests {
    /// 128,000 B/s with a 300 ms round trip: a chunk (~256 KiB) is two seconds of the link,
    /// several round trips, so the ask answers long before the first chunk is across.
    static let shape = LinkShape(bytesPerSecond: 128_000, roundTrip: .milliseconds(300))
    static let lines = [#"idle_timeout = "5s""#]

    @Test func onALongLinkAnObjectsFirstChunkGoesBesideItsAsk() async throws {
        try await SlowLinkSystem.run(shape: Self.shape, cloudLines: Self.lines) { system in
            let object = TestObject(size: 600_000, seed: 31)
            // The wake at start (its pulls, which measure the round trip) ends first.
            _ = try await system.base.sync("gw-a", table: "photos")
            try await system.putPhoto("p1", object)
            try await system.syncUntil("photos", attempts: 3) { try await system.syncCounter("objects_uploaded") == 1 }

            #expect(try await system.syncCounter("object_chunks_ahead") == 1)
            #expect(try await system.syncCounter("object_chunks_ahead_cut") == 0)
            #expect(try await system.syncCounter("object_resumed_transfers") == 0)
            // The chunk sent ahead was taken over by the walk, not sent again: every chunk went
            // once, and every byte of the object crossed the link once.
            let sent = try await system.syncCounter("object_chunks_sent")
            let asked = try await system.syncCounter("object_chunks_asked")
            #expect(sent > 1 && sent == asked, "\(sent) chunks sent, \(asked) asked about")
            let up = system.relay.counts.bytesUp
            #expect(up >= object.size && up < object.size * 103 / 100, "\(up) bytes up for \(object.size)")
            let uplink = try await system.uplink()
            #expect(uplink["failures"]?.int == 0 && uplink["wasted_bytes"]?.int == 0, "\(uplink)")
        }
    }

    /// An object of one chunk that crosses quickly: its manifest goes beside the ask and the
    /// chunk, to wait at the cloud for the chunk, instead of once the ask is answered (a 20 KB
    /// object at 128,000 B/s with a 600 ms round trip: 1.27 s to 0.83 s; docs/BENCHMARKS.md).
    /// The ask's answer is held on its way back: the cloud records the object meanwhile, which
    /// a manifest sent after that answer could not have let it do.
    @Test func anObjectOfOneChunkHasItsManifestBesideItsAsk() async throws {
        try await SlowLinkSystem.run(shape: Self.shape, cloudLines: Self.lines, throughProxy: true) { system in
            // Whatever happens, the held answer goes back before the system stops.
            defer { system.proxy.releaseAskAnswers() }
            let object = TestObject(size: 40_000, seed: 33)
            _ = try await system.base.sync("gw-a", table: "photos")
            system.relay.reset()
            try await system.putPhoto("p1", object)
            system.proxy.holdAskAnswers()
            let syncing = Task {
                try await system.syncUntil("photos", attempts: 3) { try await system.syncCounter("objects_uploaded") == 1 }
            }
            let path = "/v1/objects/\(object.digest.hash.hex)"
            let recorded = await eventually(within: .seconds(30)) {
                (try? await system.base.cloudRequest(.GET, path).status) == 200
            }
            #expect(recorded, "the cloud did not record the object while the ask's answer was held")
            #expect(system.proxy.heldAskAnswers == 1)
            system.proxy.releaseAskAnswers()
            try await syncing.value

            #expect(try await system.syncCounter("object_manifests_ahead") == 1)
            #expect(try await system.syncCounter("object_manifests_resent") == 0)
            // Nothing went twice: the object and a few requests' worth of HTTP.
            let up = system.relay.counts.bytesUp
            #expect(up >= object.size && up < object.size + 4_096, "\(up) bytes up for \(object.size)")
            let uplink = try await system.uplink()
            #expect(uplink["failures"]?.int == 0 && uplink["wasted_bytes"]?.int == 0, "\(uplink)")
        }
    }

    @Test func aFirstChunkSentBesideTheAskIsCutWhenTheCloudHasIt() async throws {
        try await SlowLinkSystem.run(shape: Self.shape, cloudLines: Self.lines) { system in
            let object = TestObject(size: 600_000, seed: 32)
            // gw-a's start-up pull first: had it pulled gw-b's row, gw-a would know the object
            // is in the cloud and queue nothing.
            _ = try await system.base.sync("gw-a", table: "photos")
            try await system.startDirectGateway()
            try await system.putPhoto("b1", object, on: "gw-b")
            try await system.syncUntil("photos", on: "gw-b", attempts: 3) {
                try await system.syncCounter("objects_uploaded", on: "gw-b") == 1
            }

            system.relay.reset()
            try await system.putPhoto("a1", object)
            try await system.syncUntil("photos", attempts: 3) { try await system.syncCounter("objects_uploaded") == 1 }
            #expect(try await system.syncCounter("object_chunks_ahead") == 1)
            #expect(try await system.syncCounter("object_chunks_ahead_cut") == 1)
            #expect(try await system.syncCounter("object_chunks_sent") == 0)
            // The walk begun with the ask is not taken for one resumed after an interruption.
            #expect(try await system.syncCounter("object_resumed_transfers") == 0)
            // What the cut chunk cost: the bytes handed to the connection before the answer
            // came (the socket buffers on both ends of this loopback relay take a chunk whole,
            // and a closed connection still delivers them), never the rest of the object.
            let up = system.relay.counts.bytesUp
            #expect(up < object.size / 2, "\(up) bytes up for an object the cloud had")
        }
    }
}
