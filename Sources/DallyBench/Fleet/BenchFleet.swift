import ArgumentParser
import DallyLogging
import Foundation

/// `dally-bench fleet`: what one change costs the cloud as the fleet of gateways that follow
/// its table grows.
///
/// A `dally cloud` child process (so its CPU time is its own) and `--gateways` gateways in this
/// process, each with an eager uplink and a notify long-poll, all following `orders`. Rows are
/// written at `--rate` a second, each on a random gateway; every other gateway is told and
/// pulls it. Reported: propagation to one watcher gateway (PUT until its changes feed holds the
/// row) and the cloud's CPU time per change.
struct BenchFleet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "Measure the cloud's CPU per change and propagation as the number of gateways grows."
    )

    @Option(name: .long, help: "Gateways, the watcher included (at least 2).")
    var gateways = 10

    @Option(name: .long, help: "Rows written a second, across the gateways.")
    var rate = 5.0

    @Option(name: .long, help: "Seconds of counted writes.")
    var seconds = 20.0

    @Option(name: .long, help: "Seconds of writes first, not counted.")
    var warmup = 3.0

    @Option(name: .long, help: "Cloud nodes; more than one needs --postgres.")
    var nodes = 1

    @Flag(name: .long, help: "The cloud on PostgreSQL (a throwaway cluster in a temporary directory; PostgreSQL installed).")
    var postgres = false

    @Option(name: .long, help: "The dally executable the cloud runs as (default: next to dally-bench).")
    var dally: String?

    @Option(name: .long, help: "SQLite synchronous mode of the cloud and the gateways: full or normal (the default).")
    var synchronous = "normal"

    @Option(name: .long, help: "Log level of the gateways (to standard error).")
    var logLevel = "error"

    @Flag(name: .long, help: "Keep the temporary data directories.")
    var keep = false

    func validate() throws {
        guard gateways >= 2 else { throw ValidationError("--gateways: at least 2 (a watcher and a writer)") }
        guard rate > 0, seconds > 0, warmup >= 0 else { throw ValidationError("--rate, --seconds: above 0") }
        guard nodes >= 1, nodes == 1 || postgres else { throw ValidationError("--nodes: 1, or more with --postgres") }
        guard ["full", "normal"].contains(synchronous) else { throw ValidationError("--synchronous: full or normal") }
    }

    func run() async throws {
        LogOutput.bootstrap(level: logLevel)
        let executable = dally ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("dally").path
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw BenchError("no dally executable at \(executable): build it (swift build -c release --product dally) or pass --dally")
        }
        let root = try BenchOutput.temporaryDirectory("fleet")
        print(
            """
            dally-bench fleet: \(gateways) gateways (1 watcher) in this process, \(nodes) dally cloud process(es) \
            (\(postgres ? "PostgreSQL" : "SQLite")), \
            \(rate) rows/s for \(seconds) s (+\(warmup) s warm-up), synchronous=\(synchronous), \
            \(ProcessInfo.processInfo.activeProcessorCount) cores
            data under \(root)
            """)
        let figures = try await BenchOutput.measured(
            in: root, keep: keep,
            start: {
                try await FleetSystem.start(
                    root: root, gateways: gateways, nodes: nodes, postgres: postgres, dally: executable,
                    synchronousFull: synchronous == "full", logLevel: logLevel)
            },
            measure: { try await $0.measure(rate: rate, seconds: seconds, warmup: warmup) }, stop: { try await $0.stop() })
        report(figures)
    }

    private func report(_ figures: FleetFigures) {
        let changes = Double(max(figures.changes, 1))
        let cloudPerChange = figures.cloudCPU * 1000 / changes
        let gatewaysPerChange = figures.gatewaysCPU * 1000 / changes
        let p = figures.propagation
        print("")
        BenchOutput.table([
            ["gateways", "changes", "propagation p50 ms", "p99 ms", "max ms", "cloud CPU ms/change",
             "per gateway", "gateways' CPU ms/change"],
            [String(gateways), String(figures.changes), BenchOutput.figure(p.percentile(50)),
             BenchOutput.figure(p.percentile(99)), BenchOutput.figure(p.max), BenchOutput.figure(cloudPerChange),
             BenchOutput.figure(cloudPerChange / Double(gateways)), BenchOutput.figure(gatewaysPerChange)],
        ])
        if figures.acrossNodes.count > 0 {
            let across = figures.acrossNodes
            print(
                "written on another node than the watcher's: \(across.count) changes, propagation p50 "
                    + "\(BenchOutput.figure(across.percentile(50))) ms, p99 \(BenchOutput.figure(across.percentile(99))) ms")
        }
        print(
            "cloud CPU \(BenchOutput.figure(figures.cloudCPU)) s and gateways' \(BenchOutput.figure(figures.gatewaysCPU)) s "
                + "over \(BenchOutput.figure(figures.seconds)) s")
        print(
            "the cloud's GET /stats p50 \(BenchOutput.figure(figures.cloudStats.percentile(50))) ms, "
                + "GET /metrics p50 \(BenchOutput.figure(figures.cloudMetrics.percentile(50))) ms (\(gateways) gateways' "
                + "cursors and declarations, ten each)")
        print("")
        print(
            BenchOutput.resultLine(
                "fleet_\(postgres ? "pg\(nodes)" : "sqlite")_\(gateways)",
                BenchOutput.percentileFields(p, [50, 99]) + [
                    ("cloud_cpu_ms_per_change", BenchOutput.figure(cloudPerChange)),
                    ("gateways_cpu_ms_per_change", BenchOutput.figure(gatewaysPerChange)),
                    ("changes", String(figures.changes)),
                    ("cloud_stats_p50_ms", BenchOutput.figure(figures.cloudStats.percentile(50))),
                    ("cloud_metrics_p50_ms", BenchOutput.figure(figures.cloudMetrics.percentile(50))),
                ] + (figures.acrossNodes.count > 0
                    ? BenchOutput.percentileFields(figures.acrossNodes, [50, 99]).map { ("across_nodes_" + $0.0, $0.1) }
                    : [])))
    }
}
