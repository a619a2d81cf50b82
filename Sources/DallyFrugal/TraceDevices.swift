import DallyCore

/// One client's device: a sensor that appends a telemetry reading about every 10 s, and a
/// status row rewritten about every 5 s. Both read the same simulated device, so the status
/// row's battery is the one the readings report.
///
/// Readings are random walks in integer steps (tenths of a degree, tenths of a percent, whole
/// dBm) so that consecutive rows look like a real sensor's, which matters for what
/// compression can gain, and doubles are made only by dividing those integers.
struct TraceDevices {
    let client: Int
    var random: SplitMix64

    private var tempTenths: Int
    private var humidityTenths: Int
    private var battery: Int
    private var rssi: Int
    private var state: String
    private var bootUptimeSeconds: Int64
    private var queue: Int
    private var readings = 0

    static let states = ["idle", "active", "syncing", "charging"]
    /// Walk limits: 10.0–35.0 °C, 15.0–90.0 % relative humidity, −100…−40 dBm.
    static let tempRange = 100...350
    static let humidityRange = 150...900
    static let rssiRange = -100...(-40)
    static let queueRange = 0...40
    /// Percent chance per reading that the battery loses one point (about 11 points an hour).
    static let batteryDrainPercent = 3
    /// Percent chance per status write that the device changes state.
    static let stateChangePercent = 8

    init(client: Int, random: SplitMix64) {
        self.client = client
        self.random = random
        tempTenths = self.random.int(in: 180...259)
        humidityTenths = self.random.int(in: 350...599)
        battery = self.random.int(in: 40...100)
        rssi = self.random.int(in: -85...(-55))
        state = self.random.pick(Self.states)
        bootUptimeSeconds = self.random.int64(in: 3_600...2_000_000)
        queue = self.random.int(in: 0...5)
    }

    /// The device's writes in `0..<duration`: readings and status rewrites, each stream
    /// starting at a random phase within its first interval.
    mutating func writes(duration: Int64) -> [TraceWrite] {
        var result: [TraceWrite] = []
        var nextReading = random.int64(in: 0...(TraceWorkload.telemetryInterval - 1))
        var nextStatus = random.int64(in: 0...(TraceWorkload.statusInterval - 1))
        while nextReading < duration || nextStatus < duration {
            if nextReading <= nextStatus {
                result.append(reading(at: nextReading))
                nextReading += jittered(TraceWorkload.telemetryInterval, TraceWorkload.telemetryJitter)
            } else {
                result.append(status(at: nextStatus))
                nextStatus += jittered(TraceWorkload.statusInterval, TraceWorkload.statusJitter)
            }
        }
        return result
    }

    private mutating func jittered(_ interval: Int64, _ jitter: Int64) -> Int64 {
        interval + random.int64(in: -jitter...jitter)
    }

    private mutating func reading(at time: Int64) -> TraceWrite {
        readings += 1
        tempTenths = walk(tempTenths, step: 2, within: Self.tempRange)
        humidityTenths = walk(humidityTenths, step: 5, within: Self.humidityRange)
        rssi = walk(rssi, step: 2, within: Self.rssiRange)
        if random.chance(Self.batteryDrainPercent) { battery = max(battery - 1, 5) }
        return TraceWrite(
            at: time, client: client, table: "telemetry", id: "t-\(client)-\(readings)",
            values: [
                .string("sensor-\(client)"),
                .double(Double(tempTenths) / 10),
                .double(Double(humidityTenths) / 10),
                .int(Int64(battery)),
                .int(Int64(rssi)),
            ])
    }

    private mutating func status(at time: Int64) -> TraceWrite {
        if random.chance(Self.stateChangePercent) { state = random.pick(Self.states.filter { $0 != state }) }
        queue = walk(queue, step: 2, within: Self.queueRange)
        return TraceWrite(
            at: time, client: client, table: "status", id: "s-\(client)",
            values: [
                .string(state),
                .int(Int64(battery)),
                .int(bootUptimeSeconds + time / 1000),
                .int(Int64(queue)),
            ])
    }

    /// One step of a random walk of at most `step` either way, kept within `range`.
    private mutating func walk(_ value: Int, step: Int, within range: ClosedRange<Int>) -> Int {
        min(max(value + random.int(in: -step...step), range.lowerBound), range.upperBound)
    }
}
