import ArgumentParser
import DallyClient
import DallyClientCLI

/// `dally client stats`: the gateway's stats (admin token).
struct ClientStats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats", abstract: "Print the gateway's /stats document (admin token).",
        discussion: "Example: DALLY_TOKEN=dev-admin-token-change-me dally client stats --output table")

    @OptionGroup var connection: ClientConnection

    func run() async throws {
        let output = connection.output
        try await connection.run { client in
            ClientSession.emit(try output.render(document: try await client.stats()))
        }
    }
}
