import ArgumentParser

/// `dally-bench`: release-build benchmarks of gateway ↔ cloud sync, run in one process on
/// loopback with temporary data directories, printing figures and no verdicts.
///
/// - `dally-bench apply`: the cloud's batch apply rate, measured three ways in one run (the
///   store alone, over HTTP from one and from several gateways) next to the raw SQLite insert
///   rate of the same rows, the limit the others are bounded by.
/// - `dally-bench propagation`: how long a row written on one gateway takes to reach a
///   long-poll on another, through sync-now, the cloud and the notify long-poll.
/// - `dally-bench frugal`: bytes, wake-ups and staleness of a seeded hour of writes through
///   Dally, next to naive and periodic sync and the floors.
/// - `dally-bench scope`: downstream bytes and pull time of a gateway scoped to one store of
///   many against an unscoped one, and the cloud's scoped page query.
/// - `dally-bench slowlink`: objects and a wide-row backlog over slow, long links, clean and
///   cut half-way: time against the ideal, bytes against a clean transfer.
/// - `dally-bench drain`: the gateway replica's own CPU per row of a drain (batches built,
///   recorded and settled), with no cloud.
///
/// A separate executable so that the shipped `dally` carries none of this code (`dally bench
/// …` runs it from beside `dally`). Build with `swift build -c release --product dally-bench`
/// first: debug figures mean little.
/// `tools/bench/sync.sh` builds and runs both sync benchmarks.
@main
struct DallyBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dally-bench",
        abstract:
            "Benchmark gateway ↔ cloud sync on loopback (apply rate, propagation latency, frugality, codecs, objects, chunking, slow links, scopes, fleets, the replica's drain).",
        subcommands: [
            BenchApply.self, BenchPropagation.self, BenchFrugal.self, BenchCodec.self, BenchChunking.self,
            BenchObjects.self, BenchSlowLink.self, BenchScope.self, BenchFleet.self, BenchDrain.self,
        ]
    )
}
