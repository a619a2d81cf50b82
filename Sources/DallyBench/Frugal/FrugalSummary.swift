import DallyFrugal

/// The benchmark's table for one trace: the strategies side by side with the floors, then the
/// issue's targets, each with its figure and whether it is met.
struct FrugalSummary {
    let outcomes: [FrugalOutcome]
    let floors: FrugalFloors
    let trace: FrugalTrace

    func render() -> String {
        var report = FrugalReport(columns: outcomes.map(\.name) + ["floor"])
        func ints(_ value: (FrugalOutcome) -> Int?, floor: Int? = nil) -> [Int?] { outcomes.map(value) + [floor] }
        func seconds(_ value: (FrugalOutcome) -> Int64) -> [Double?] { outcomes.map { Double(value($0)) / 1000 } + [nil] }
        report.add("wire bytes (both ways, headers)", integers: ints({ $0.bytes }, floor: floors.finalBytes))
        report.add("  floor of the obliged states", integers: outcomes.map { _ in nil } + [floors.obligedBytes])
        report.add("  up", integers: ints { $0.up.values.reduce(0, +) })
        report.add("  down", integers: ints { $0.down.values.reduce(0, +) })
        report.add("  over wifi", integers: ints { ($0.up["wifi"] ?? 0) + ($0.down["wifi"] ?? 0) })
        report.add("  over cellular", integers: ints { ($0.up["cellular"] ?? 0) + ($0.down["cellular"] ?? 0) })
        report.add("object bytes (chunk bodies sent)", integers: ints({ $0.totalObjectBytes }, floor: floors.objectBytes))
        report.add("  share of wire bytes, %", decimals: outcomes.map { 100 * Double($0.totalObjectBytes) / Double(max($0.bytes, 1)) } + [100 * Double(floors.objectBytes) / Double(max(floors.finalBytes, 1))])
        report.add("  over wifi", integers: ints { $0.objectBytes["wifi"] ?? 0 })
        report.add("  over cellular", integers: ints { $0.objectBytes["cellular"] ?? 0 })
        report.add("rows' bytes (wire bytes − object bytes)", integers: ints({ $0.bytes - $0.totalObjectBytes }, floor: floors.zstd19Bytes))
        report.add("requests (transmissions)", integers: ints { $0.totalRequests })
        report.add("wake-ups (own radios)", integers: ints({ $0.radios.wakeUps }, floor: floors.wakeUps))
        report.add("  wifi radio (shared)", integers: ints { $0.wakeUpsByClass["wifi"] })
        report.add("  cellular radio (shared)", integers: ints { $0.wakeUpsByClass["cellular"] })
        report.add("wake-ups (one shared radio per class)", integers: ints { $0.sharedRadios?.wakeUps ?? $0.radios.wakeUps })
        report.add("radio energy, J (own radios)", decimals: outcomes.map(\.radios.energyJoules) + [nil])
        report.add("radio connected, s (own radios)", decimals: outcomes.map { $0.radios.connectedMillis / 1000 } + [nil])
        report.add("wifi-only data over cellular", integers: ints { $0.wifiOnlyBytesOverCellular })
        report.add("deadline misses (seen at the cloud)", integers: ints { $0.staleness.overall.deadlineMisses })
        report.add("deadline misses (gateway's count)", integers: ints { $0.gatewayDeadlineMisses })
        report.add("staleness p50, s", decimals: seconds { $0.staleness.overall.p50 })
        report.add("staleness p99, s", decimals: seconds { $0.staleness.overall.p99 })
        report.add("staleness max, s", decimals: seconds { $0.staleness.overall.max })
        report.add("writes not delivered", integers: ints { $0.staleness.overall.undelivered })
        report.add("cloud rows wrong / missing", cells: outcomes.map { "\($0.mismatchedRows) / \($0.missingRows)" } + ["—"])
        report.add("cloud objects missing", integers: ints { $0.missingObjects })
        report.add("dictionaries uploaded", integers: ints { $0.name.hasPrefix("dally") ? $0.dictionaries : nil })
        report.add("run time, s (wall)", decimals: outcomes.map(\.seconds) + [nil])
        var text = report.render()
        text += "floor: fewest wake-ups the deadlines allow (interval stabbing); zstd -19 of the cloud's final rows "
        text += "(\(FrugalReport.grouped(floors.rawBytes)) bytes raw → \(FrugalReport.grouped(floors.zstd19Bytes))) plus their objects at their size "
        text += "(incompressible, \(FrugalReport.grouped(floors.objectBytes))); obliged states: the \(FrugalReport.grouped(floors.obliged.states)) "
        text += "row states the fewest wake-ups must send, zstd -19 (\(FrugalReport.grouped(floors.obliged.raw)) bytes raw), plus every object stored\n"
        text += "object bytes: chunk bodies as sent (no headers, asks or manifests); Dally's from the gateway's "
        text += "sync.object_chunk_bytes_on_wire, per class by whether wifi was up when they went\n"
        text += targets()
        return text
    }

    /// The issue's targets, computed from the figures above.
    func targets() -> String {
        guard let dally = outcomes.first(where: { $0.name == "dally" }) else { return "" }
        var lines: [String] = []
        func check(_ name: String, _ figure: String, _ met: Bool) {
            lines.append("  [\(met ? "met" : "NOT met")] \(name): \(figure)")
        }
        let wakeRatio = Double(dally.radios.wakeUps) / Double(max(floors.wakeUps, 1))
        let allUp = trace.wifiUp == [0..<trace.duration] || trace.wifiUp.contains { $0.lowerBound <= 0 && $0.upperBound >= trace.duration }
        if allUp {
            check("wake-ups ≤ 1.05× the minimum (all classes up)", "\(dally.radios.wakeUps) vs \(floors.wakeUps) = \(FrugalReport.decimal(wakeRatio, places: 2))×", wakeRatio <= 1.05)
        }
        let byteRatio = Double(dally.bytes) / Double(max(floors.finalBytes, 1))
        check("wire bytes ≤ 1.5× the floor (rows zstd -19 + objects)", "\(FrugalReport.decimal(byteRatio, places: 2))×", byteRatio <= 1.5)
        let obligedRatio = Double(dally.bytes) / Double(max(floors.obligedBytes, 1))
        let rowRatio = Double(dally.bytes - dally.totalObjectBytes) / Double(max(floors.zstd19Bytes, 1))
        lines.append(
            "         (against the obliged states' floor: \(FrugalReport.decimal(obligedRatio, places: 2))×; "
                + "rows' bytes against the rows' floor: \(FrugalReport.decimal(rowRatio, places: 2))×)")
        if let naive = outcomes.first(where: { $0.name == "naive" }) {
            let bytes = Double(naive.bytes) / Double(max(dally.bytes, 1))
            check("≥ 20× fewer bytes than naive", FrugalReport.ratio(Double(naive.bytes), Double(dally.bytes)), bytes >= 20)
            let wakes = Double(naive.radios.wakeUps) / Double(max(dally.radios.wakeUps, 1))
            check(
                "≥ 50× fewer wake-ups than naive (devices' own radios)",
                FrugalReport.ratio(Double(naive.radios.wakeUps), Double(dally.radios.wakeUps)), wakes >= 50)
            lines.append(
                "         (naive never lets a radio sleep: connected \(FrugalReport.ratio(naive.radios.connectedMillis, dally.radios.connectedMillis)) "
                    + "as long, energy \(FrugalReport.ratio(naive.radios.energyJoules, dally.radios.energyJoules)), "
                    + "transmissions \(FrugalReport.ratio(Double(naive.totalRequests), Double(dally.totalRequests))))")
        }
        if let periodic = outcomes.first(where: { $0.name == "periodic" }) {
            let bytes = Double(periodic.bytes) / Double(max(dally.bytes, 1))
            check("≥ 3× fewer bytes than periodic", FrugalReport.ratio(Double(periodic.bytes), Double(dally.bytes)), bytes >= 3)
        }
        check("0 wifi-only rows over cellular", "\(dally.wifiOnlyBytesOverCellular)", dally.wifiOnlyBytesOverCellular == 0)
        let cellularObjects = dally.objectBytes["cellular"] ?? 0
        check("0 photo object bytes over cellular", "\(cellularObjects)", cellularObjects == 0)
        check(
            "the cloud ends with every row and object",
            "\(dally.mismatchedRows) wrong, \(dally.missingRows) missing rows, \(dally.missingObjects) missing objects",
            dally.mismatchedRows + dally.missingRows + dally.missingObjects == 0)
        let cellularMisses = trace.tables.filter(\.allowsCellular).reduce(0) {
            $0 + (dally.staleness.perTable[$1.name]?.deadlineMisses ?? 0)
        }
        let misses = allUp ? dally.staleness.overall.deadlineMisses : cellularMisses
        check(
            allUp ? "0 deadline misses (all classes up)" : "0 deadline misses of tables cellular may carry (always up)",
            "\(misses)", misses == 0)
        return "targets:\n" + lines.joined(separator: "\n") + "\n"
    }
}
