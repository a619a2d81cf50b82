import GRDB

extension StatementArguments {
    /// Arguments from values already converted, without GRDB's generic initializer: called from
    /// another module it is not specialized, and its key path (`\.databaseValue`) is built anew
    /// at each call, type names demangled included — a tenth of the cloud's CPU when it applied
    /// a batch row by row (docs/BENCHMARKS.md).
    package init(bound values: [DatabaseValue]) {
        self.init(values.map { $0 as (any DatabaseValueConvertible)? })
    }
}

extension Statement {
    /// Executes the statement once with `values`, one for each of its parameters in order.
    ///
    /// Binds them directly (`setUncheckedArguments`): the statement's own SQL and `values` come
    /// from the same code, and GRDB's checked path nests a closure per argument to bind it
    /// without a copy, which costs more than the copy for the short values of a row.
    package func execute(values: [DatabaseValue]) throws {
        setUncheckedArguments(StatementArguments(bound: values))
        try execute()
    }
}
