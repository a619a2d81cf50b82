/// What a gateway does with a local write to a row outside its table's scope
/// (`scope_writes` in the table's config).
///
/// For example, `scope_writes = "reject"` makes `PUT /v1/tables/orders/rows/o1` with
/// `{"store_id": "S99"}` on a gateway scoped to `store_id = "S12"` answer
/// `403 out_of_scope`.
public enum ScopeWrites: String, Sendable, CaseIterable {
    /// The write is stored and synced like any other; the cloud's copy then moves out of the
    /// scope, and the gateway keeps its row until its scope next changes.
    case accept
    /// The write is refused with `out_of_scope` and changes nothing.
    case reject
}
