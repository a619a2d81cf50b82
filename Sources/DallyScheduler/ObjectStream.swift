/// A table's objects as the scheduler sees them: a stream of work of their own, with the
/// table's `upload_objects` and `download_objects` policies as its rules, named
/// `"<table>/objects"` (a slash never appears in a table name).
///
/// Giving objects their own rules, rather than new logic, keeps the one greedy algorithm for
/// both: an object's deadline wakes the cheapest uplink its classes allow, and a wake for any
/// reason carries every object whose classes include the uplink's. So photos that may travel
/// over Wi-Fi only ride a Wi-Fi wake and are never on a cellular one.
public enum ObjectStream {
    static let suffix = "/objects"

    /// The stream name of `table`'s objects.
    public static func name(of table: String) -> String { table + suffix }

    /// The table a stream name belongs to; nil for a table's own (row) name.
    public static func table(of name: String) -> String? {
        name.hasSuffix(suffix) ? String(name.dropLast(suffix.count)) : nil
    }

    /// The rules of `table`'s object stream: upload by `maxDelay` over `uploadNetworks`, fetch
    /// queued objects within `period` over `downloadNetworks` (empty for on-demand objects,
    /// which are fetched when read, not by the scheduler).
    public static func rules(
        of table: String, localOnly: Bool, maxDelay: Int64, uploadNetworks: Set<String>, period: Int64,
        downloadNetworks: Set<String>
    ) -> TableRules {
        TableRules(
            name: name(of: table), localOnly: localOnly, maxDelay: maxDelay, uploadNetworks: uploadNetworks,
            period: period, downloadNetworks: downloadNetworks)
    }
}
