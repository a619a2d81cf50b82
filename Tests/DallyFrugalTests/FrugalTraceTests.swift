import DallyCore
import DallyFrugal
import Testing

@Suite("FrugalTrace")
struct FrugalTraceTests {
    static let trace = FrugalTrace.generate(seed: 1)

    @Test func theSameSeedGivesTheSameTraceAndAnotherSeedAnother() {
        #expect(FrugalTrace.generate(seed: 1) == Self.trace)
        #expect(FrugalTrace.generate(seed: 2) != Self.trace)
        // Byte for byte, on any machine: a fingerprint of every write and the wifi pattern.
        #expect(TracePins.fingerprint(Self.trace) == TracePins.seed1Fingerprint)
        // The photos' images moved nothing else: without them, the trace is what it was.
        #expect(TracePins.fingerprint(Self.trace, withObjects: false) == TracePins.seed1FingerprintBeforeObjects)
    }

    @Test func eachPhotoStoresAnImageThatItsEditsKeep() {
        var first: [String: TraceObject] = [:]
        for write in Self.trace.writes {
            guard write.table == "photos" else {
                #expect(write.object == nil)
                continue
            }
            #expect(write.values.last == .null)
            guard let object = write.object else {
                Issue.record("photo \(write.id) without an image")
                continue
            }
            #expect(TraceWorkload.photoObjectBytes.contains(object.size))
            if let stored = first[write.id] {
                #expect(stored == object, "an edit of \(write.id) changed its image")
            } else {
                first[write.id] = object
            }
        }
        let objects = Self.trace.storedObjects
        #expect(objects.count == first.count)
        #expect(Set(objects.map(\.seed)).count == objects.count)
        #expect(Self.trace.finalObjects() == objects)
        #expect(objects.count == TracePins.seed1Objects)
        #expect(objects.reduce(0) { $0 + $1.size } == TracePins.seed1ObjectBytes)
        // Log-uniform from 150 KB to 1.5 MB: the median near 474 KB, a third below 321 KB.
        let sizes = objects.map(\.size).sorted()
        #expect((400_000...560_000).contains(sizes[sizes.count / 2]), "\(sizes[sizes.count / 2])")
        let small = sizes.filter { $0 < 321_000 }.count
        #expect((sizes.count / 4...sizes.count * 5 / 12).contains(small), "\(small) of \(sizes.count)")
    }

    @Test func withoutImagesTheRowsAreTheSameAndNoWriteStoresAnObject() {
        let rowsOnly = FrugalTrace.generate(seed: 1, images: false)
        #expect(rowsOnly.writes.allSatisfy { $0.object == nil })
        #expect(rowsOnly.storedObjects.isEmpty)
        #expect(rowsOnly.writes.map(\.values) == Self.trace.writes.map(\.values))
        #expect(rowsOnly.writes.map(\.at) == Self.trace.writes.map(\.at))
        #expect(rowsOnly.wifiUp == Self.trace.wifiUp)
    }

    @Test func theWorkloadHasTheIntendedShape() {
        let counts = Self.trace.writesPerTable
        #expect(counts == TracePins.seed1WritesPerTable)
        #expect(Self.trace.writes.count == TracePins.seed1WritesPerTable.values.reduce(0, +))
        // 50 sensors × ~360 readings, 50 status rows × ~720 rewrites, ~300 orders, ~200 photos.
        #expect((17_000...19_000).contains(counts["telemetry"] ?? 0))
        #expect((34_000...38_000).contains(counts["status"] ?? 0))
        let finals = Self.trace.finalRows()
        #expect(finals["status"]?.count == 50)
        #expect((270...330).contains(finals["orders"]?.count ?? 0))
        #expect((180...220).contains(finals["photos"]?.count ?? 0))
        #expect(finals["telemetry"]?.count == counts["telemetry"])
        // Orders are hot: several writes per row on average.
        #expect((counts["orders"] ?? 0) > 4 * (finals["orders"]?.count ?? 0))
        #expect((50_000...60_000).contains(Self.trace.writes.count))
    }

    @Test func writesAreSortedValidAndShapedByTheirTables() {
        let trace = Self.trace
        let tables = Dictionary(uniqueKeysWithValues: trace.tables.map { ($0.name, $0) })
        for (previous, write) in zip(trace.writes, trace.writes.dropFirst()) {
            let ordered =
                previous.at < write.at
                || (previous.at == write.at && (previous.client, previous.table, previous.id) < (write.client, write.table, write.id))
            #expect(ordered, "\(previous) before \(write)")
        }
        for write in trace.writes {
            #expect((0..<trace.duration).contains(write.at))
            #expect((0..<trace.clients).contains(write.client))
            #expect(Identifier.isValidRowID(write.id), "\(write.id)")
            let columns = tables[write.table]?.columns.count
            #expect(write.values.count == (write.deleted ? 0 : columns), "\(write)")
        }
    }

    @Test func ordersMoveForwardAndCancelledOrdersEndDeleted() {
        let statuses = ["new", "paid", "packed", "shipped"]
        var last: [String: TraceWrite] = [:]
        var deleted = 0
        for write in Self.trace.writes where write.table == "orders" {
            if let previous = last[write.id] {
                #expect(!previous.deleted, "a write after the delete of \(write.id)")
                #expect(previous.client == write.client)
                if !write.deleted, case .string(let old) = previous.values[2], case .string(let new) = write.values[2] {
                    let step = (statuses.firstIndex(of: new) ?? -9) - (statuses.firstIndex(of: old) ?? 0)
                    #expect(step == 0 || step == 1, "\(old) → \(new)")
                }
            } else {
                #expect(write.values[2] == "new")
            }
            if write.deleted { deleted += 1 }
            last[write.id] = write
        }
        #expect((3...30).contains(deleted))
        let tombstones = Self.trace.finalRows()["orders"]?.values.filter(\.deleted).count
        #expect(tombstones == deleted)
    }

    @Test func finalRowsAreEachRowsLastWrite() {
        let finals = Self.trace.finalRows()
        for write in Self.trace.writes {
            let final = finals[write.table]?[write.id]
            #expect(final.map { $0.at >= write.at } == true)
        }
        let status = finals["status"]?["s-7"]
        #expect(status == Self.trace.writes.last { $0.id == "s-7" })
    }

    @Test func partialWifiComesInTwoToFourStretchesAboutSixtyPercentUp() {
        for seed in UInt64(1)...30 {
            let trace = FrugalTrace.generate(seed: seed, clients: 1, wifi: .partial)
            let up = trace.wifiUp
            #expect((2...4).contains(up.count), "seed \(seed)")
            #expect(up.first?.lowerBound == 0)
            #expect((up.first?.count ?? 0) >= 300_000)
            #expect(up.last?.upperBound == trace.duration)
            for (a, b) in zip(up, up.dropFirst()) {
                #expect(b.lowerBound - a.upperBound >= 180_000, "seed \(seed): \(up)")
                #expect(a.count >= 300_000)
            }
            let share = up.reduce(0) { $0 + $1.count } * 100 / Int(trace.duration)
            #expect((55...65).contains(share), "seed \(seed): \(share)%")
            #expect(trace.isWifiUp(at: 0))
            #expect(trace.isWifiUp(at: trace.duration + 60_000))
            #expect(!trace.isWifiUp(at: up[0].upperBound))
        }
        #expect(FrugalTrace.generate(seed: 1, clients: 1, wifi: .always).wifiUp == [0..<3_600_000])
    }

    @Test func smallTracesScaleTheWorkload() {
        let trace = FrugalTrace.generate(seed: 9, clients: 3, duration: 600_000, wifi: .partial)
        let finals = trace.finalRows()
        // 300 orders and 200 photos per 50 clients per hour: 3 and 2 for 3 clients in 10 minutes.
        #expect(finals["orders"]?.count == 3)
        #expect(finals["photos"]?.count == 2)
        #expect(finals["status"]?.count == 3)
        #expect((165...200).contains(trace.writesPerTable["telemetry"] ?? 0))
        #expect(trace.wifiUp.first?.lowerBound == 0)
        #expect(trace.wifiUp.last?.upperBound == 600_000)
    }

    @Test func tablesDeclareTheirPolicies() {
        let photos = Self.trace.table("photos")
        #expect(photos?.networks == ["wifi"])
        #expect(photos?.allowsCellular == false)
        #expect(photos?.columnNames == ["caption", "taken_at", "width", "height", "bytes", "tags", "image"])
        #expect(photos?.objectColumn == 6)
        #expect(Self.trace.table("orders")?.objectColumn == nil)
        #expect(photos?.tomlBlock.hasSuffix(
            """
            upload = { max_delay = "600s", networks = ["wifi"] }
            upload_objects = { max_delay = "600s", networks = ["wifi"] }

            """) == true, "\(photos?.tomlBlock ?? "")")
        #expect(
            Self.trace.table("orders")?.tomlBlock == """
                [[tables]]
                name = "orders"
                columns = ["customer TEXT", "total REAL", "status TEXT", "items JSON"]
                upload = { max_delay = "60s", networks = ["wifi", "cellular"] }

                """)
    }

    @Test func theGeneratorsBoundedDrawsAreItsOwn() {
        // SplitMix64's published first output for seed 0.
        var random = SplitMix64(seed: 0)
        #expect(random.next() == 0xE220_A839_7B1D_CDAF)
        var counts = Array(repeating: 0, count: 6)
        for _ in 0..<6_000 { counts[random.int(in: 0...5)] += 1 }
        #expect(counts.allSatisfy { (850...1_150).contains($0) }, "\(counts)")
        #expect(random.int64(in: 7...7) == 7)
        #expect(random.below(0) == 0)
    }
}
