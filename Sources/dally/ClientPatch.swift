import ArgumentParser
import DallyClient
import DallyClientCLI

/// `dally client patch <table> <id> [values]`: change some columns.
struct ClientPatch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "patch",
        abstract: "Change some columns of an existing row; prints it as stored.",
        discussion: "Example: dally client patch orders o1 '{\"paid\":true}' --expected-seq 3")

    @OptionGroup var connection: ClientConnection
    @Argument(help: "The table.") var table: String
    @Argument(help: "The row's id.") var id: String
    @Argument(help: "The columns to change as a JSON object (default: standard input).") var values: String?
    @Option(name: .long, help: "Write only if the row's seq is still this.") var expectedSeq: Int64?

    func run() async throws {
        let values = try connection.values(values)
        let (table, id, expectedSeq, output) = (table, id, expectedSeq, connection.output)
        try await connection.run { client in
            let row = try await client.table(table).patch(id: id, values, expectedSeq: expectedSeq)
            ClientSession.emit(try output.render(rows: [row]))
        }
    }
}
