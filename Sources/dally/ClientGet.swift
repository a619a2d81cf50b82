import ArgumentParser
import DallyClient
import DallyClientCLI

/// `dally client get <table> <id>`: one row.
struct ClientGet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get", abstract: "Print one row (exit 1, not_found, when there is none).",
        discussion: "Example: dally client get orders o1 --output table")

    @OptionGroup var connection: ClientConnection
    @Argument(help: "The table.") var table: String
    @Argument(help: "The row's id.") var id: String

    func run() async throws {
        let (table, id, output) = (table, id, connection.output)
        try await connection.run { client in
            guard let row = try await client.table(table).get(id: id) else {
                throw DallyClientError.gateway(
                    GatewayRefusal(status: 404, codeName: "not_found", message: "no row '\(id)' in table '\(table)'", field: nil))
            }
            ClientSession.emit(try output.render(rows: [row]))
        }
    }
}
