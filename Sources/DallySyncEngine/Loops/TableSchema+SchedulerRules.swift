import DallyCore
import DallyScheduler

extension TableSchema {
    /// The table's rules for the scheduler: its rows, and its objects as a stream of their own
    /// when it has OBJECT columns (``ObjectStream``).
    var schedulerRules: [TableRules] {
        let policy = self.policy
        let rows = TableRules(
            name: name, localOnly: policy.localOnly, maxDelay: policy.uploadRows.maxDelay.milliseconds,
            uploadNetworks: Set(policy.uploadRows.networks), period: policy.downloadRows.period.milliseconds,
            downloadNetworks: Set(policy.downloadRows.networks))
        guard columns.contains(where: { $0.type == .object }) else { return [rows] }
        // Objects of an atomic table come down with their rows' page, and on-demand ones when
        // read: neither is fetched by the stream's period.
        let fetchedByPeriod = !policy.atomicSync && !policy.downloadObjects.onDemand
        let objects = ObjectStream.rules(
            of: name, localOnly: policy.localOnly, maxDelay: policy.uploadObjects.maxDelay.milliseconds,
            uploadNetworks: Set(policy.uploadObjects.networks), period: policy.downloadObjects.period.milliseconds,
            downloadNetworks: fetchedByPeriod ? Set(policy.downloadObjects.networks) : [])
        return [rows, objects]
    }
}
