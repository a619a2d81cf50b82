import DallyCore

/// The workload's numbers, in one place so the report can quote them. Rates are per client or
/// per 50 clients per hour; ``FrugalTrace/generate(seed:clients:duration:wifi:)`` scales the
/// per-hour counts to the clients and duration asked for.
public enum TraceWorkload {
    /// Each client's sensor adds a reading about every 10 s (±2 s of jitter): 360 rows an hour.
    public static let telemetryInterval: Int64 = 10_000
    public static let telemetryJitter: Int64 = 2_000
    /// Each client rewrites its one status row about every 5 s (±1 s): 720 writes an hour.
    public static let statusInterval: Int64 = 5_000
    public static let statusJitter: Int64 = 1_000
    /// Orders placed per 50 clients per hour; each is then updated 1–10 times, 10 s to 3 min
    /// apart, by the client that placed it.
    public static let ordersPerHour = 300
    public static let orderUpdates: ClosedRange<Int> = 1...10
    public static let orderUpdateGap: ClosedRange<Int64> = 10_000...180_000
    /// Percent of orders cancelled (deleted) after their cart edits instead of moving on.
    public static let orderCancelPercent = 4
    /// Photos taken per 50 clients per hour, and the percent whose caption or tags are edited
    /// once, 1 to 20 minutes later.
    public static let photosPerHour = 200
    public static let photoEditPercent = 15
    public static let photoEditDelay: ClosedRange<Int64> = 60_000...1_200_000
    /// Each photo's image, stored with its first write as an object: a phone JPEG as an app
    /// uploads it (resized and recompressed, not the camera original the `bytes` column counts),
    /// from 150 KB to 1.5 MB, log-uniform (each tenfold range equally likely: median about
    /// 474 KB, mean about 586 KB). The bytes are seeded and incompressible.
    public static let photoObjectBytes: ClosedRange<Int> = 150_000...1_500_000

    /// The partial wifi pattern: this share of the time up (percent), in this many stretches,
    /// none shorter than `minimumWifiUp`, the outages no shorter than `minimumWifiDown`.
    public static let wifiUpPercent: ClosedRange<Int> = 55...65
    public static let wifiStretches: ClosedRange<Int> = 2...4
    public static let minimumWifiUp: Int64 = 300_000
    public static let minimumWifiDown: Int64 = 180_000

    /// The hour and the client count the per-hour counts are given for.
    static let referenceDuration: Int64 = 3_600_000
    static let referenceClients = 50

    /// `perHour` scaled to `clients` and `duration`, rounded to the nearest whole number.
    static func scaled(_ perHour: Int, clients: Int, duration: Int64) -> Int {
        let numerator = Int64(perHour) * Int64(clients) * duration
        let denominator = Int64(referenceClients) * referenceDuration
        return Int((numerator + denominator / 2) / denominator)
    }
}

extension FrugalTrace {
    /// The benchmark's four tables: sensor readings, device status, orders with hot updates,
    /// and photos (metadata and an image object) that may only travel over wifi.
    public static let standardTables: [TraceTable] = [
        TraceTable(
            name: "telemetry",
            columns: ["device TEXT", "temp REAL", "humidity REAL", "battery INTEGER", "rssi INTEGER"],
            maxDelay: 300_000, networks: ["wifi", "cellular"]),
        TraceTable(
            name: "status",
            columns: ["state TEXT", "battery INTEGER", "uptime INTEGER", "queue INTEGER"],
            maxDelay: 120_000, networks: ["wifi", "cellular"]),
        TraceTable(
            name: "orders",
            columns: ["customer TEXT", "total REAL", "status TEXT", "items JSON"],
            maxDelay: 60_000, networks: ["wifi", "cellular"]),
        TraceTable(
            name: "photos",
            columns: [
                "caption TEXT", "taken_at INTEGER", "width INTEGER", "height INTEGER", "bytes INTEGER", "tags JSON",
                "image OBJECT",
            ],
            maxDelay: 600_000, networks: ["wifi"],
            uploadObjects: TraceUploadPolicy(maxDelay: 600_000, networks: ["wifi"])),
    ]

    /// A deterministic trace: the same arguments give the same trace, byte for byte, on every
    /// machine (all randomness is ``SplitMix64``; every double is an integer divided by 10 or 100).
    ///
    /// Each part of the workload draws from its own stream of the seed, so changing how orders
    /// are generated does not move a single telemetry reading. The numbers are in
    /// ``TraceWorkload``; with the defaults there are about 56,000 writes.
    ///
    /// - Parameters:
    ///   - clients: local clients, each with one sensor (telemetry) and one status row.
    ///   - duration: milliseconds; orders and photos scale with it and with `clients`.
    ///   - images: whether photos carry their images; without, the trace is the rows-only one
    ///     the codec was measured on (every row the same, the image column null).
    public static func generate(
        seed: UInt64, clients: Int = 50, duration: Int64 = 3_600_000, wifi: WifiPattern = .partial,
        images: Bool = true
    ) -> FrugalTrace {
        let clients = max(clients, 1)
        let duration = max(duration, 1)
        var writes: [TraceWrite] = []
        for client in 0..<clients {
            var devices = TraceDevices(client: client, random: stream(seed, 1_000 + UInt64(client)))
            writes += devices.writes(duration: duration)
        }
        var orders = TraceOrders(clients: clients, duration: duration, random: stream(seed, 2))
        writes += orders.writes()
        var photos = TracePhotos(
            clients: clients, duration: duration, random: stream(seed, 3), objectRandom: stream(seed, 4),
            images: images)
        writes += photos.writes()
        writes.sort(by: TraceWrite.precedes)
        var wifiRandom = stream(seed, 1)
        let wifiUp = wifi == .always ? [0..<duration] : partialWifi(duration: duration, random: &wifiRandom)
        return FrugalTrace(tables: standardTables, writes: writes, wifiUp: wifiUp, duration: duration, clients: clients)
    }

    /// An independent generator for one part of the workload.
    static func stream(_ seed: UInt64, _ part: UInt64) -> SplitMix64 {
        var mixer = SplitMix64(seed: seed ^ (part &* 0xD1B5_4A32_D192_ED03))
        return SplitMix64(seed: mixer.next())
    }

    /// Wifi stretches: up from 0, then alternately down and up, ending up. Lengths are whole
    /// seconds: the share of up time and the stretches' count are drawn first, then each total
    /// is split into parts no shorter than the minimums (shorter only for traces too short to
    /// hold them).
    static func partialWifi(duration: Int64, random: inout SplitMix64) -> [Range<Int64>] {
        let seconds = duration / 1000
        let stretches = random.int(in: TraceWorkload.wifiStretches)
        guard seconds >= Int64(2 * stretches) else { return [0..<duration] }
        let upSeconds = seconds * Int64(random.int(in: TraceWorkload.wifiUpPercent)) / 100
        let downSeconds = seconds - upSeconds
        let ups = split(
            upSeconds, parts: stretches, minimum: min(TraceWorkload.minimumWifiUp / 1000, upSeconds / Int64(stretches)),
            random: &random)
        let downs = split(
            downSeconds, parts: stretches - 1,
            minimum: min(TraceWorkload.minimumWifiDown / 1000, downSeconds / Int64(stretches - 1)), random: &random)
        var windows: [Range<Int64>] = []
        var start: Int64 = 0
        for index in 0..<stretches {
            let end = index == stretches - 1 ? duration : (start + ups[index]) * 1000
            windows.append(start * 1000..<end)
            if index < downs.count { start += ups[index] + downs[index] }
        }
        return windows
    }

    /// `total` split into `parts` numbers no smaller than `minimum` that add up to `total`,
    /// the surplus shared by random weights.
    static func split(_ total: Int64, parts: Int, minimum: Int64, random: inout SplitMix64) -> [Int64] {
        let surplus = total - minimum * Int64(parts)
        let weights = (0..<parts).map { _ in Int64(random.int(in: 1...100)) }
        let weightSum = weights.reduce(0, +)
        var result = weights.map { minimum + surplus * $0 / weightSum }
        result[parts - 1] += total - result.reduce(0, +)
        return result
    }
}
