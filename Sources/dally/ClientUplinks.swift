import ArgumentParser
import DallyClient
import DallyClientCLI

/// `dally client uplinks [name --set …]`: list uplinks, or override one's availability.
struct ClientUplinks: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "uplinks", abstract: "List the gateway's uplinks, or set one's availability (admin token).",
        discussion: """
            Example: dally client uplinks                         # one JSON line per uplink
                     dally client uplinks lte --set unavailable   # auto | available | unavailable
            """)

    @OptionGroup var connection: ClientConnection
    @Argument(help: "The uplink to change (with --set).") var name: String?
    @Option(name: .long, help: "auto, available or unavailable.") var set: UplinkAvailability?

    func validate() throws {
        if (name == nil) != (set == nil) { throw ValidationError("give both an uplink name and --set, or neither") }
    }

    func run() async throws {
        let (name, set, output) = (name, set, connection.output)
        try await connection.run { client in
            if let name, let set {
                ClientSession.emit(try output.render(document: try await client.setUplink(name, availability: set).document))
                return
            }
            let uplinks = try await client.uplinks()
            switch output {
            case .json: for uplink in uplinks { ClientSession.emit(try output.render(document: uplink.document)) }
            case .table:
                ClientSession.emit(
                    TextTable.layout(
                        [["name", "class", "availability", "available", "usable", "url"]]
                            + uplinks.map { [$0.name, $0.networkClass, $0.availability.rawValue, "\($0.available)", "\($0.usable)", $0.url] }))
            }
        }
    }
}

extension UplinkAvailability: ExpressibleByArgument {}
