import ArgumentParser
import DallyClient
import DallyClientCLI
import DallyCore
import DallyLogging
import Foundation

/// `dally client watch [table…]`: follow the changes feed.
struct ClientWatch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Follow the changes feed: one JSON line per change, as it happens, until interrupted.",
        discussion: """
            Each line is the changed row with its table; its seq is the cursor to pass as --since to \
            resume. When the gateway stops or cannot be reached, watch waits and polls again from the \
            last change it printed (a note goes to standard error): a restart loses and repeats nothing.

            Example: dally client watch orders notes --since 42
            """)

    @OptionGroup var connection: ClientConnection
    @Argument(help: "Tables to follow (default: every table the token may read).") var tables: [String] = []
    @Option(name: .long, help: "Start after this seq (0: from the beginning).") var since: Int64 = 0
    @Option(name: .long, help: "Seconds the gateway holds each poll.") var wait: Int = 25
    @Option(name: .long, help: "Longest wait between polls after a failure, in seconds (at most 86400).") var retryMax: Double = 5

    func validate() throws {
        // A poll held 0 s would be asked again at once, round and round, while nothing changes.
        if wait < 1 { throw ValidationError("--wait must be at least 1 (seconds)") }
        // Up to a day: a number past what milliseconds hold stopped the command with a trap.
        if !(retryMax > 0 && retryMax <= 86_400) {
            throw ValidationError("--retry-max must be a number of seconds above 0, at most 86400 (a day)")
        }
        if since < 0 { throw ValidationError("--since must be 0 or a seq printed before") }
    }

    func run() async throws {
        let (tables, since, output) = (tables, since, connection.output)
        let options = ChangeFeed<JSONValue>.Options(
            wait: .seconds(wait), retryMinimum: .milliseconds(100), retryMaximum: .milliseconds(Int(retryMax * 1000)),
            onRetry: { error, pause in
                StandardError.line("dally client: \(error); polling again in \(DurationText.format(pause))")
            })
        try await connection.run { client in
            for try await change in client.changes(tables: tables.isEmpty ? nil : tables, since: since, options: options) {
                ClientSession.emit(try output.render(rows: [change], header: false))
            }
        }
    }
}
