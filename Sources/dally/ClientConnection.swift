import ArgumentParser
import DallyClient
import DallyClientCLI

/// The flags every `dally client` command takes: where the gateway is, the token, the output.
struct ClientConnection: ParsableArguments {
    @Option(name: .long, help: "The gateway's URL (default: DALLY_URL, else \(ClientSession.defaultURL)).")
    var url: String?

    @Option(name: .long, help: "The bearer token (default: DALLY_TOKEN).")
    var token: String?

    @Option(name: .long, help: "PEM file of the private CA that signed an https gateway's certificate (default: DALLY_CA, else the system's roots).")
    var ca: String?

    @Option(name: .long, help: "json (one document per line) or table.")
    var output: OutputFormat = .json

    func validate() throws {
        if let problem = ClientSession.urlProblem(ClientSession.baseURL(url)) { throw ValidationError(problem) }
    }

    /// A JSON object of column values: `argument`, or standard input when it is nil or `-`.
    /// Anything else is a usage error (exit 2); standard input that cannot be read, exit 1.
    func values(_ argument: String?) throws -> JSONValue {
        let text: String
        do {
            text = try ClientSession.input(argument)
        } catch {
            throw Self.refuse(error, code: ClientExitCode.refused)
        }
        do {
            return try ClientSession.values(text)
        } catch {
            throw Self.refuse(error, code: ClientExitCode.usage)
        }
    }

    /// Says what is wrong with the input or a file once, as `dally client: …`, and gives the exit
    /// code to end with: not ArgumentParser's usage text, which a batch file's bad line 2 or a
    /// file that cannot be read is not about.
    static func refuse(_ error: any Error, code: Int32) -> ExitCode {
        ClientSession.printError(error)
        return ExitCode(code)
    }

    /// Runs `body` with a client and exits with its code.
    func run(_ body: @Sendable (DallyClient) async throws -> Void) async throws {
        let code = await ClientSession.run(url: url, token: token, ca: ca, body)
        if code != ClientExitCode.ok { throw ExitCode(code) }
    }
}

extension OutputFormat: ExpressibleByArgument {}
