import AsyncHTTPClient
import DallyCompression
import DallyCore
import DallyFrugal
import DallyObjects
import DallySync
import Foundation
import NIOCore
import Synchronization

/// The trace without Dally, against the same cloud protocol: **naive** sends each write at
/// once as its own JSON request; **periodic** has each client send its changes of the last
/// minute as one JSON request (TinySync style). Neither compresses nor knows policies: a
/// request goes over wifi when wifi is up, else over cellular.
///
/// A photo's image goes with the send that carries its first write, before the rows, through
/// the cloud's object API with the least a client can do: its bytes as one chunk, uncompressed
/// (`PUT /v1/chunks/{hash}`, the whole object in one body), then its one-chunk manifest
/// (`PUT /v1/objects/{hash}`); no ask first, since nothing was sent before. The row carries the
/// reference `{"hash", "size", "chunks": 1}`. Like the rows, objects go over cellular when wifi
/// is down, counted as wifi-only data over cellular.
///
/// Requests go one at a time, so the relay's counts before and after each one are exactly
/// its bytes, which the radio model needs per device.
struct FrugalBaselineRun {
    enum Kind: String {
        case naive
        case periodic
    }

    let kind: Kind
    let trace: FrugalTrace
    let hashes: FrugalObjectHashes
    let root: String

    func run() async throws -> FrugalOutcome {
        let started = ContinuousClock.now
        let time = TraceTime()
        let cloud = try await FrugalCloud.start(directory: root + "/cloud", trace: trace, now: { time.now })
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        var outcome = FrugalOutcome(name: kind.rawValue)
        do {
            try await send(cloud: cloud, http: http, time: time, into: &outcome)
        } catch {
            try? await http.shutdown()
            try? await cloud.stop()
            throw error
        }
        do {
            let gateway = kind == .naive ? FrugalSetup.naive : FrugalSetup.periodic
            outcome.missingObjects = try await FrugalObjectCheck(
                http: http, cloudPort: cloud.services.ports[0], gateway: gateway
            ).missing(trace, hashes: hashes)
        } catch {
            try? await http.shutdown()
            try? await cloud.stop()
            throw error
        }
        try await http.shutdown()
        let (mismatched, missing) = try await CloudReader(store: cloud.cloud.store, trace: trace, hashes: hashes).verify()
        (outcome.mismatchedRows, outcome.missingRows) = (mismatched, missing)
        outcome.count(cloud.wifi.counts, networkClass: "wifi")
        outcome.count(cloud.cellular.counts, networkClass: "cellular")
        try await cloud.stop()
        outcome.seconds = (ContinuousClock.now - started).benchSeconds
        return outcome
    }

    private func send(cloud: FrugalCloud, http: HTTPClient, time: TraceTime, into outcome: inout FrugalOutcome)
        async throws
    {
        var versions: [String: Int64] = [:]
        var staleness = StalenessTracker(tables: trace.tables, tolerance: 0)
        var perDevice: [(radio: Int, event: RadioEvent)] = []
        var shared: [(radio: String, event: RadioEvent)] = []
        let gateway = kind == .naive ? FrugalSetup.naive : FrugalSetup.periodic
        let wifiOnly = Set(trace.tables.filter { !$0.allowsCellular }.map(\.name))

        let sends: [PeriodicSend] =
            kind == .naive
            ? trace.writes.map { PeriodicSend(at: $0.at, client: $0.client, writes: [$0]) }
            : BaselineBodies.periodicSends(trace: trace)
        for write in trace.writes { staleness.recordWrite(table: write.table, id: write.id, at: write.at) }
        var stored: Set<TraceObject> = []
        for send in sends {
            time.now = send.at
            guard
                let batch = BaselineBodies.periodicBatch(
                    writes: send.writes, tables: trace.tables, gateway: gateway, replica: "client-\(send.client)",
                    batchID: UUID().uuidString.lowercased(), epochMillis: FrugalTrace.epochMillis,
                    baseVersion: { versions["\($0)/\($1)"] }, objectValue: hashes.singleChunkReference)
            else { continue }
            let networkClass = trace.isWifiUp(at: send.at) ? "wifi" : "cellular"
            let port = networkClass == "wifi" ? cloud.wifiPort : cloud.cellularPort
            let relay = cloud.relay(networkClass)
            let before = relay.counts
            var sentObjects = false
            for write in send.writes {
                guard let object = write.object, stored.insert(object).inserted else { continue }
                try await store(object, over: port, gateway: gateway, http: http)
                outcome.objectBytes[networkClass, default: 0] += object.size
                sentObjects = true
            }
            let answer = try await post(batch, over: port, http: http)
            let after = relay.counts
            let event = RadioEvent(
                at: send.at, bytesUp: after.bytesUp - before.bytesUp, bytesDown: after.bytesDown - before.bytesDown)
            perDevice.append((send.client, event))
            shared.append((networkClass, event))
            if networkClass == "cellular", sentObjects || batch.sections.contains(where: { wifiOnly.contains($0.table) }) {
                outcome.wifiOnlyBytesOverCellular += event.bytesUp + event.bytesDown
            }
            for section in answer.results {
                for result in section.rows {
                    switch result {
                    case .accepted(let id, let version):
                        versions["\(section.table)/\(id)"] = version
                    case .conflict(let id, let conflict):
                        versions["\(section.table)/\(id)"] = conflict.version
                    case .rejected(let id, let rejection):
                        throw BenchError("\(kind) \(section.table)/\(id) refused: \(rejection.code) \(rejection.message)")
                    }
                }
            }
            for section in batch.sections {
                for change in section.changes {
                    staleness.recordArrival(
                        table: section.table, id: change.id, updatedAt: change.updatedAt - FrugalTrace.epochMillis,
                        arrivedAt: send.at)
                }
            }
        }
        outcome.staleness = staleness.report(at: max(time.now, trace.duration))
        outcome.radios = RadioModel.lte.totalUsage(of: perDevice)
        outcome.sharedRadios = RadioModel.lte.totalUsage(of: shared)
        for (networkClass, usage) in RadioModel.lte.usageByRadio(of: shared) {
            outcome.wakeUpsByClass[networkClass] = usage.wakeUps
        }
    }

    /// Stores `object` in the cloud as one uncompressed chunk and its one-chunk manifest.
    private func store(_ object: TraceObject, over port: Int, gateway: String, http: HTTPClient) async throws {
        let hash = try hashes.hash(object)
        var chunk = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/chunks/\(hash.hex)")
        chunk.method = .PUT
        chunk.headers.add(name: "Authorization", value: FrugalSetup.basicAuthorization(gateway))
        chunk.headers.add(name: "Content-Type", value: "application/octet-stream")
        chunk.body = .stream(object.synthetic.pieces(), length: .known(Int64(object.size)))
        try await exchange(chunk, what: "PUT /v1/chunks/\(hash.hex)", http: http)
        let manifest = try ObjectManifest(
            hash: hash, size: Int64(object.size), chunks: [ChunkEntry(hash: hash, size: object.size)])
        var put = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/objects/\(hash.hex)")
        put.method = .PUT
        put.headers.add(name: "Authorization", value: FrugalSetup.basicAuthorization(gateway))
        put.headers.add(name: "Content-Type", value: "application/json")
        put.body = .bytes(ByteBuffer(string: manifest.json.jsonText))
        try await exchange(put, what: "PUT /v1/objects/\(hash.hex)", http: http)
    }

    private func exchange(_ request: HTTPClientRequest, what: String, http: HTTPClient) async throws {
        let response = try await http.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 1 << 20)
        guard (200..<300).contains(response.status.code) else {
            throw BenchError("\(kind) \(what): \(response.status.code) \(String(buffer: body))")
        }
    }

    /// One plain JSON request, as a client without Dally would send it: no compression asked
    /// or given.
    private func post(_ batch: BatchRequest, over port: Int, http: HTTPClient) async throws -> BatchAnswer {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/batches")
        request.method = .POST
        request.headers.add(name: "Authorization", value: FrugalSetup.basicAuthorization(batch.gateway))
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: batch.encode()))
        let response = try await http.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 64 << 20)
        guard response.status == .ok else {
            throw BenchError("\(kind) POST /v1/batches: \(response.status.code) \(String(buffer: body))")
        }
        return try BatchAnswer.decode(try JSONParser.parse(Array(buffer: body)), outline: batch.outline)
    }
}
