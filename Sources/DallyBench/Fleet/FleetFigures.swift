/// What `dally-bench fleet` measured over the counted writes.
struct FleetFigures {
    /// From just before a write's PUT on a gateway until the watcher gateway's feed held it.
    var propagation = Samples()
    /// Those of the changes written on a gateway of another node than the watcher's: the
    /// commit reached the watcher's node through PostgreSQL's LISTEN/NOTIFY.
    var acrossNodes = Samples()
    /// Writes counted (after the warm-up).
    var changes = 0
    /// The cloud process's CPU time over the counted window, in seconds.
    var cloudCPU = 0.0
    /// This process's (every gateway and the clients) CPU time over the same window.
    var gatewaysCPU = 0.0
    /// The window, from the first counted write until the last one reached the watcher.
    var seconds = 0.0
    /// The first cloud node's `GET /stats` and `GET /metrics` once the writes are in, one at a
    /// time: what the fleet's cursors and told declarations cost an operator's scrape.
    var cloudStats = Samples()
    var cloudMetrics = Samples()
}
