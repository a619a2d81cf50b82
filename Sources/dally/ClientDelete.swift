import ArgumentParser
import DallyClient
import DallyClientCLI

/// `dally client delete <table> <id>`: tombstone a row.
struct ClientDelete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete a row (it stays as a tombstone every feed sees); prints the tombstone.",
        discussion: "Example: dally client delete orders o1")

    @OptionGroup var connection: ClientConnection
    @Argument(help: "The table.") var table: String
    @Argument(help: "The row's id.") var id: String
    @Option(name: .long, help: "Delete only if the row's seq is still this.") var expectedSeq: Int64?

    func run() async throws {
        let (table, id, expectedSeq, output) = (table, id, expectedSeq, connection.output)
        try await connection.run { client in
            let row = try await client.table(table).delete(id: id, expectedSeq: expectedSeq)
            ClientSession.emit(try output.render(rows: [row]))
        }
    }
}
