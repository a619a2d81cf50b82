import ArgumentParser
import DallyClient
import DallyClientCLI

/// `dally client sync <table>`: sync now.
struct ClientSync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Send a table's pending changes to the cloud and pull it now, over the networks its policy allows.",
        discussion: """
            Prints {"status":"synced","sent","accepted","conflicts","rejected","received"} or \
            {"status":"queued","reason"} (no allowed uplink now: the changes go at the first chance).

            Example: dally client sync orders
            """)

    @OptionGroup var connection: ClientConnection
    @Argument(help: "The table.") var table: String

    func run() async throws {
        let (table, output) = (table, connection.output)
        try await connection.run { client in
            ClientSession.emit(try output.render(document: try await client.table(table).sync()))
        }
    }
}
