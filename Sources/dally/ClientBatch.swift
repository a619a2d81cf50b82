import ArgumentParser
import DallyClient
import DallyClientCLI
import Foundation

/// `dally client batch <table> [file]`: many writes in one transaction.
struct ClientBatch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batch",
        abstract: "Write many rows in one transaction, from a JSON or NDJSON file or standard input.",
        discussion: """
            JSON: the gateway's batch body, \
            {"created":[{"id":"o1","values":{…}}],"updated":[…],"deleted":["o2"]}.

            NDJSON: one write per line, \
            {"op":"put"|"patch"|"delete","id":"o1","values":{…},"expected_seq":3}.

            Prints {"saved":[…],"errors":[…],"seq":n}; exits 1 when any row was refused.

            Example: dally client batch orders writes.ndjson --all-or-nothing
            """)

    @OptionGroup var connection: ClientConnection
    @Argument(help: "The table.") var table: String
    @Argument(help: "The file (default or '-': standard input).") var file: String?
    @Flag(name: .long, help: "Save nothing if any row is refused.") var allOrNothing = false

    func run() async throws {
        let text: String
        if let file, file != "-" {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw ClientConnection.refuse(ClientInputError("cannot read \(file)"), code: ClientExitCode.refused)
            }
            text = String(decoding: data, as: UTF8.self)
        } else {
            do {
                text = try ClientSession.input(nil)
            } catch {
                throw ClientConnection.refuse(error, code: ClientExitCode.refused)
            }
        }
        var batch: Batch<JSONValue>
        do {
            batch = try BatchFile.parse(text)
        } catch {
            throw ClientConnection.refuse(error, code: ClientExitCode.usage)
        }
        if allOrNothing { batch.allOrNothing = true }
        let (table, output, written) = (table, connection.output, batch)
        try await connection.run { client in
            let result = try await client.table(table).batch(written)
            ClientSession.emit(try output.render(document: result))
            if !result.errors.isEmpty {
                throw RowsRefused(refused: result.errors.count, total: written.count, firstCode: result.errors[0].codeName)
            }
        }
    }
}
