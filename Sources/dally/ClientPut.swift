import ArgumentParser
import DallyClient
import DallyClientCLI

/// `dally client put <table> <id> [values]`: create or replace a row.
struct ClientPut: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "put",
        abstract: "Create or replace a row; prints it as stored.",
        discussion: """
            Columns not given become null. Values from standard input when omitted or '-'.

            Example: dally client put orders o1 '{"customer":"Ada","total":12.5}'
            """)

    @OptionGroup var connection: ClientConnection
    @Argument(help: "The table.") var table: String
    @Argument(help: "The row's id.") var id: String
    @Argument(help: "The values as a JSON object (default: standard input).") var values: String?
    @Option(name: .long, help: "Write only if the row's seq is still this (0: only if it does not exist).")
    var expectedSeq: Int64?

    func run() async throws {
        let values = try connection.values(values)
        let (table, id, expectedSeq, output) = (table, id, expectedSeq, connection.output)
        try await connection.run { client in
            let row = try await client.table(table).put(id: id, values, expectedSeq: expectedSeq)
            ClientSession.emit(try output.render(rows: [row]))
        }
    }
}
