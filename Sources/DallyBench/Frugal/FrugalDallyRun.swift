import AsyncHTTPClient
import DallyClocks
import DallyCore
import DallyFrugal
import DallyGateway
import DallySyncEngine
import DallyTestSupport
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// The trace through a real Dally gateway on a manual clock: each write is a `PUT` on the
/// gateway's API at its moment in the trace (a photo's image then streamed to the row's
/// `OBJECT` column, `PUT …/objects/image`, at the same moment; an edit that keeps the image a
/// `PATCH` of the other columns); between writes the clock jumps straight to the gateway's next
/// planned wake, so the hour takes as long as the work in it.
struct FrugalDallyRun {
    let trace: FrugalTrace
    let hashes: FrugalObjectHashes
    let root: String
    let dictionaryBytes: Int
    let level: Int

    func run() async throws -> FrugalOutcome {
        let started = ContinuousClock.now
        let clock = ManualClock(epochMillis: FrugalTrace.epochMillis)
        let traceNow: @Sendable () -> Int64 = { clock.now.offset.milliseconds }
        let cloud = try await FrugalCloud.start(directory: root + "/cloud", trace: trace, now: traceNow)
        let config = try FrugalSetup.gateway(
            directory: root + "/gateway", trace: trace, wifiPort: cloud.wifiPort, cellularPort: cloud.cellularPort,
            dictionaryBytes: dictionaryBytes, level: level)
        let gateway = try Gateway(config: config, logger: Logger(label: "frugal.gateway"), clock: clock, now: clock.wallMillis)
        let services: ServiceRunner
        do {
            services = try await ServiceRunner.bench(servers: 1) { report in
                gateway.services(port: 0) { port in await report(0, port) }
            }
        } catch {
            try? gateway.close()
            try? await cloud.stop()
            throw error
        }
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        var outcome = FrugalOutcome(name: "dally")
        do {
            guard let syncer = gateway.syncer else { throw BenchError("the gateway has no syncer") }
            var driver = Driver(
                trace: trace, clock: clock, syncer: syncer, http: http,
                base: "http://127.0.0.1:\(services.ports[0])",
                reader: CloudReader(store: cloud.cloud.store, trace: trace, hashes: hashes))
            try await driver.replay(into: &outcome, cloud: cloud)
            let status = syncer.status
            outcome.gatewayDeadlineMisses = Int(status.deadlineMisses.values.reduce(0, +))
            outcome.dictionaries = Int(status.dictionariesUploaded)
        } catch {
            try? await http.shutdown()
            try? await services.stop()
            try? gateway.close()
            try? await cloud.stop()
            throw error
        }
        do {
            outcome.missingObjects = try await FrugalObjectCheck(
                http: http, cloudPort: cloud.services.ports[0], gateway: FrugalSetup.edge
            ).missing(trace, hashes: hashes)
        } catch {
            try? await http.shutdown()
            try? await services.stop()
            try? gateway.close()
            try? await cloud.stop()
            throw error
        }
        try await http.shutdown()
        try await services.stop()
        try gateway.close()
        let (mismatched, missing) = try await CloudReader(store: cloud.cloud.store, trace: trace, hashes: hashes).verify()
        (outcome.mismatchedRows, outcome.missingRows) = (mismatched, missing)
        for relay in [cloud.wifi, cloud.cellular] {
            let counts = relay.counts
            outcome.count(counts, networkClass: relay.name)
            let usage = RadioModel.lte.usage(
                of: counts.activities.map { RadioEvent(at: $0.at, bytesUp: $0.bytesUp, bytesDown: $0.bytesDown) })
            outcome.radios = outcome.radios + usage
            outcome.wakeUpsByClass[relay.name] = usage.wakeUps
        }
        try await cloud.stop()
        outcome.seconds = (ContinuousClock.now - started).benchSeconds
        return outcome
    }

    /// Moves the clock and writes, waiting for the gateway to finish each wake before time
    /// moves on.
    private struct Driver {
        let trace: FrugalTrace
        let clock: ManualClock
        let syncer: any SyncControl
        let http: HTTPClient
        let base: String
        var reader: CloudReader

        func now() -> Int64 { clock.now.offset.milliseconds }

        mutating func replay(into outcome: inout FrugalOutcome, cloud: FrugalCloud) async throws {
            var staleness = StalenessTracker(tables: trace.tables, tolerance: 0)
            var wifiUp = true
            let wifiOnly = Set(trace.tables.filter { !$0.allowsCellular }.map(\.name))
            var index = 0
            var stored: Set<TraceObject> = []
            var objectBytesOnWire = syncer.status.objects.chunkBytesOnWire
            while true {
                // The next event: a write, a change of wifi, or the gateway's planned wake. After
                // the last write the gateway runs on until it has nothing planned (or its plan
                // lies an hour past the trace: what wifi-only tables wait for when wifi is down).
                let nextWrite = index < trace.writes.count ? trace.writes[index].at : nil
                let nextWifi = Self.nextWifiChange(after: now(), in: trace)
                let wake = syncer.status.nextWakeAt.map { $0 - FrugalTrace.epochMillis }
                guard let target = [nextWrite, nextWifi, wake].compactMap({ $0 }).min(),
                    nextWrite != nil || nextWifi != nil || target <= trace.duration + 3_600_000
                else { break }
                if target > now() { clock.advance(by: .milliseconds(target - now())) }
                if trace.isWifiUp(at: now()) != wifiUp {
                    wifiUp.toggle()
                    _ = try syncer.setAvailability(uplink: "wifi", to: wifiUp ? .auto : .unavailable)
                }
                while index < trace.writes.count, trace.writes[index].at == now() {
                    let write = trace.writes[index]
                    let storesObject = write.object.map { !stored.contains($0) } ?? false
                    try await put(write, keepsObject: write.object != nil && !storesObject)
                    if storesObject, let object = write.object, let table = trace.table(write.table) {
                        try await put(object, table: table, id: write.id)
                        stored.insert(object)
                    }
                    staleness.recordWrite(table: write.table, id: write.id, at: write.at)
                    index += 1
                }
                try await settle()
                // Object chunks the gateway sent in this step crossed the one uplink up: wifi
                // if it is, else cellular (the step's wakes all ran with wifi as it is now).
                let onWire = syncer.status.objects.chunkBytesOnWire
                outcome.objectBytes[wifiUp ? "wifi" : "cellular", default: 0] += Int(onWire - objectBytesOnWire)
                objectBytesOnWire = onWire
                for arrival in try await reader.arrivals() {
                    staleness.recordArrival(table: arrival.table, id: arrival.id, updatedAt: arrival.at, arrivedAt: now())
                    if wifiOnly.contains(arrival.table), !wifiUp {
                        // Rows of a wifi-only table that reached the cloud while wifi was down
                        // can only have crossed cellular.
                        outcome.wifiOnlyBytesOverCellular += 1
                    }
                }
            }
            outcome.staleness = staleness.report(at: now())
        }

        /// Waits until the gateway's decision loop has nothing to do before the next moment.
        func settle() async throws {
            for _ in 0..<60_000 {
                if syncer.isQuiet { return }
                try await Task.sleep(for: .milliseconds(1))
            }
            throw BenchError("the gateway did not settle at trace time \(now()) ms")
        }

        /// The write's row: a `PUT` of its values but the `OBJECT` column (left null until the
        /// object's own `PUT`), or, when the row keeps the object it holds (`keepsObject`), a
        /// `PATCH` of those columns, which leaves the reference as it is.
        func put(_ write: TraceWrite, keepsObject: Bool) async throws {
            guard let table = trace.table(write.table) else { return }
            var request = HTTPClientRequest(url: "\(base)/v1/tables/\(write.table)/rows/\(write.id)")
            request.headers.add(name: "Authorization", value: "Bearer \(FrugalSetup.clientToken)")
            if write.deleted {
                request.method = .DELETE
            } else {
                request.method = keepsObject ? .PATCH : .PUT
                var writer = JSONWriter(capacity: 256)
                writer.raw("{\"values\":{")
                var first = true
                for (i, (name, value)) in zip(table.columnNames, write.values).enumerated() where i != table.objectColumn {
                    if !first { writer.raw(",") }
                    first = false
                    writer.key(name)
                    writer.value(value)
                }
                writer.raw("}}")
                request.body = .bytes(ByteBuffer(bytes: writer.bytes))
            }
            let response = try await http.execute(request, timeout: .seconds(30))
            let body = try await response.body.collect(upTo: 1 << 20)
            guard (200..<300).contains(response.status.code) || (write.deleted && response.status == .notFound) else {
                throw BenchError(
                    "\(request.method) \(write.table)/\(write.id): \(response.status.code) \(String(buffer: body))")
            }
        }

        /// Streams `object` into the row's `OBJECT` column through the gateway's object route.
        func put(_ object: TraceObject, table: TraceTable, id: String) async throws {
            guard let column = table.objectColumn else { return }
            let name = table.columnNames[column]
            var request = HTTPClientRequest(url: "\(base)/v1/tables/\(table.name)/rows/\(id)/objects/\(name)")
            request.method = .PUT
            request.headers.add(name: "Authorization", value: "Bearer \(FrugalSetup.clientToken)")
            request.headers.add(name: "Content-Type", value: "application/octet-stream")
            request.body = .stream(object.synthetic.pieces(), length: .known(Int64(object.size)))
            let response = try await http.execute(request, timeout: .seconds(120))
            let body = try await response.body.collect(upTo: 1 << 20)
            guard (200..<300).contains(response.status.code) else {
                throw BenchError("PUT \(table.name)/\(id)/objects/\(name): \(response.status.code) \(String(buffer: body))")
            }
        }

        static func nextWifiChange(after time: Int64, in trace: FrugalTrace) -> Int64? {
            trace.wifiUp.flatMap { [$0.lowerBound, $0.upperBound] }.filter { $0 > time && $0 <= trace.duration }.min()
        }
    }
}
