import ArgumentParser
import DallyClient
import DallyClientCLI

/// `dally client conflicts list|settle`.
struct ClientConflicts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conflicts", abstract: "List and settle conflicts and changes the cloud rejected.",
        subcommands: [ClientConflictsList.self, ClientConflictsSettle.self])
}

/// `dally client conflicts list`.
struct ClientConflictsList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "Print open conflicts and rejected changes, newest first (one JSON line each).",
        discussion: "Example: dally client conflicts list --table docs --all")

    @OptionGroup var connection: ClientConnection
    @Option(name: .long, help: "Only this table.") var table: String?
    @Flag(name: .long, help: "Include the ones a policy settled.") var all = false
    @Option(name: .long, help: "At most this many.") var limit: Int?

    func validate() throws {
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
    }

    func run() async throws {
        let (table, all, limit, output) = (table, all, limit, connection.output)
        try await connection.run { client in
            let conflicts = try await client.conflicts(table: table, includeSettled: all, limit: limit)
            switch output {
            case .json: for conflict in conflicts { ClientSession.emit(try output.render(document: conflict)) }
            case .table:
                ClientSession.emit(
                    TextTable.layout(
                        [["table", "id", "kind", "status", "policy", "winner", "detected_at"]]
                            + conflicts.map {
                                [$0.table, $0.id, $0.kind, $0.status, $0.policy ?? "", $0.winner ?? "", String($0.detectedAt)]
                            }))
            }
        }
    }
}

/// `dally client conflicts settle <table> <id> --take local|server | --values JSON`.
struct ClientConflictsSettle: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settle", abstract: "Settle an open conflict; prints the row as now stored.",
        discussion: """
            Example: dally client conflicts settle docs d1 --take server
                     dally client conflicts settle docs d1 --values '{"text":"merged"}'
            """)

    enum Side: String, ExpressibleByArgument, CaseIterable { case local, server }

    @OptionGroup var connection: ClientConnection
    @Argument(help: "The table.") var table: String
    @Argument(help: "The row's id.") var id: String
    @Option(name: .long, help: "local (send ours again) or server (take the cloud's).") var take: Side?
    @Option(name: .long, help: "A merged row as a JSON object, written and sent.") var values: String?

    func validate() throws {
        if (take == nil) == (values == nil) { throw ValidationError("give either --take local|server or --values") }
    }

    func run() async throws {
        let settlement: Settlement
        switch (take, values) {
        case (.local?, _): settlement = .takeLocal
        case (.server?, _): settlement = .takeServer
        default:
            settlement = .write(try connection.values(values ?? ""))
        }
        let (table, id, output) = (table, id, connection.output)
        try await connection.run { client in
            ClientSession.emit(try output.render(rows: [try await client.settle(table: table, id: id, settlement)]))
        }
    }
}
