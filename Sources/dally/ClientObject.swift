import ArgumentParser
import DallyClient
import DallyClientCLI
import Foundation

/// `dally client object put|get`.
struct ClientObject: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "object", abstract: "Upload or download a row's object (an OBJECT column).",
        subcommands: [ClientObjectPut.self, ClientObjectGet.self])
}

/// `dally client object put <table> <id> <column> <file>`.
struct ClientObjectPut: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "put",
        abstract: "Upload a file as a row's object, streamed, its SHA-256 checked by the gateway; prints the row.",
        discussion: """
            A progress bar is drawn on standard error when it is a terminal.

            Example: dally client object put photos p1 image cat.jpg
            """)

    @OptionGroup var connection: ClientConnection
    @Argument(help: "The table.") var table: String
    @Argument(help: "The row's id.") var id: String
    @Argument(help: "The OBJECT column.") var column: String
    @Argument(help: "The file to upload.") var file: String
    @Option(name: .long, help: "Write only if the row's seq is still this.") var expectedSeq: Int64?

    func run() async throws {
        let (table, id, column, file, expectedSeq, output) = (table, id, column, file, expectedSeq, connection.output)
        let bar = ProgressBar(label: file)
        try await connection.run { client in
            defer { bar.finish() }
            let row = try await client.table(table).uploadObject(
                id: id, column: column, file: file, expectedSeq: expectedSeq, progress: bar.handler)
            bar.finish()
            ClientSession.emit(try output.render(rows: [row]))
        }
    }
}

/// `dally client object get <table> <id> <column> [file]`.
struct ClientObjectGet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Download a row's object to a file (resuming a cut download) or to standard output; SHA-256 checked.",
        discussion: """
            To a file, the bytes go to <file>.part first; run the same command again after a cut and \
            only the missing bytes are fetched. Prints {"hash","size"} once the file is whole and checked.

            Example: dally client object get photos p1 image copy.jpg
            """)

    @OptionGroup var connection: ClientConnection
    @Argument(help: "The table.") var table: String
    @Argument(help: "The row's id.") var id: String
    @Argument(help: "The OBJECT column.") var column: String
    @Argument(help: "The file to write (default or '-': standard output).") var file: String?

    func run() async throws {
        let (table, id, column, file, output) = (table, id, column, file, connection.output)
        let bar = ProgressBar(label: file ?? column)
        try await connection.run { client in
            defer { bar.finish() }
            let objects = client.table(table)
            guard let file, file != "-" else {
                let (_, bytes) = try await objects.objectStream(id: id, column: column, progress: bar.handler)
                for try await piece in bytes { StandardOutput.write(piece) }
                return
            }
            let info = try await objects.downloadObject(id: id, column: column, to: file, progress: bar.handler)
            bar.finish()
            ClientSession.emit(try output.render(document: info))
        }
    }
}
