import ArgumentParser
import DallyClient
import DallyClientCLI

/// `dally client rows <table>`: the table's rows, page after page.
struct ClientRows: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rows", abstract: "Print a table's live rows in sequence order, fetching page after page.",
        discussion: """
            --where column:value filters by equality (TEXT, INTEGER, REAL, BOOLEAN columns; 'null' \
            matches null).

            Example: dally client rows orders --where paid:true --where customer:Ada --output table
            """)

    @OptionGroup var connection: ClientConnection
    @Argument(help: "The table.") var table: String
    @Option(name: .customLong("where"), help: "column:value, repeatable (ANDed).") var filters: [String] = []
    @Option(name: .long, help: "Only rows changed after this seq.") var since: Int64 = 0
    @Option(name: .long, help: "Rows per page (default: the gateway's).") var pageSize: Int?
    @Option(name: .long, help: "Stop after this many rows.") var limit: Int?
    @Flag(name: .long, help: "Include tombstones.") var includeDeleted = false

    func validate() throws {
        for filter in filters where !filter.contains(":") {
            throw ValidationError("--where takes column:value, got '\(filter)'")
        }
        if let pageSize, pageSize < 1 { throw ValidationError("--page-size must be at least 1") }
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
        // The gateway ANDs its filters; kept in a map here, a second one on a column would
        // silently replace the first.
        var columns: Set<Substring> = []
        for filter in filters {
            let column = filter.prefix { $0 != ":" }
            guard columns.insert(column).inserted else {
                throw ValidationError("--where names '\(column)' twice: a row has one value in a column")
            }
        }
    }

    func run() async throws {
        var matching: [String: String] = [:]
        for filter in filters {
            let parts = filter.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            matching[String(parts[0])] = String(parts[1])
        }
        let (table, since, pageSize, limit, includeDeleted, output) =
            (table, since, pageSize, limit, includeDeleted, connection.output)
        let request = matching
        try await connection.run { client in
            var printed = 0
            var first = true
            pages: for try await page in client.table(table).pages(
                since: since, matching: request, pageSize: pageSize, includeDeleted: includeDeleted)
            {
                var rows = page.rows
                if let limit { rows = Array(rows.prefix(limit - printed)) }
                // A table's header once, on top; JSON lines page after page as they come.
                if output == .json || !rows.isEmpty {
                    ClientSession.emit(try output.render(rows: rows, header: first))
                    first = false
                }
                printed += rows.count
                if let limit, printed >= limit { break pages }
            }
        }
    }
}
