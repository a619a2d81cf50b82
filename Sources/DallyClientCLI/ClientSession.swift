import DallyClient
import DallyLogging
import Foundation

/// One run of a `dally client` command: the client made from flags and environment, the body
/// run, the client shut down, and any error printed and turned into an exit code.
public enum ClientSession {
    /// The gateway when neither `--url` nor `DALLY_URL` names one: `dally dev`'s first gateway.
    public static let defaultURL = "http://127.0.0.1:8080"

    /// `--url`, else `DALLY_URL`, else ``defaultURL``; `--token`, else `DALLY_TOKEN`; `--ca`,
    /// else `DALLY_CA`: the PEM file of the private CA that signed an `https` gateway's
    /// certificate (the system's roots when neither is given).
    ///
    /// - Throws: ``DallyClientError/fileError(_:)`` when the CA file cannot be read.
    public static func client(
        url: String?, token: String?, ca: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> DallyClient {
        let transport =
            if let ca = ca ?? environment["DALLY_CA"] {
                try HTTPClientTransport(certificateAuthority: ca, maximumConnections: 4)
            } else {
                HTTPClientTransport(maximumConnections: 4)
            }
        return DallyClient(
            url: baseURL(url, environment: environment), token: token ?? environment["DALLY_TOKEN"], transport: transport)
    }

    /// The gateway's URL as ``client(url:token:environment:)`` picks it.
    public static func baseURL(_ url: String?, environment: [String: String] = ProcessInfo.processInfo.environment)
        -> String
    {
        url ?? environment["DALLY_URL"] ?? defaultURL
    }

    /// Why `url` cannot name a gateway (nil when it can): a usage error, not an unreachable one.
    public static func urlProblem(_ url: String) -> String? {
        guard let parsed = URL(string: url), let scheme = parsed.scheme, ["http", "https"].contains(scheme.lowercased()),
            let host = parsed.host, !host.isEmpty
        else {
            return "the gateway URL must be http://host:port or https://host:port, got '\(url)'"
        }
        return nil
    }

    /// Runs `body` with a client; answers the exit code (0, or that of the error, which is
    /// printed to standard error as `dally client: …`).
    public static func run(
        url: String?, token: String?, ca: String? = nil, _ body: @Sendable (DallyClient) async throws -> Void
    ) async -> Int32 {
        let client: DallyClient
        do {
            client = try self.client(url: url, token: token, ca: ca)
        } catch {
            printError(error)
            return ClientExitCode.usage
        }
        var code = ClientExitCode.ok
        do {
            try await body(client)
        } catch {
            printError(error)
            code = ClientExitCode.of(error)
        }
        try? await client.shutdown()
        return code
    }

    /// Prints a line to standard output at once (a pipe reader sees each change as it comes).
    public static func emit(_ line: String) {
        guard !line.isEmpty else { return }
        StandardOutput.write(Data((line + "\n").utf8))
    }

    /// Prints `dally client: <error>` to standard error.
    public static func printError(_ error: any Error) {
        StandardError.line("dally client: \(error)")
    }

    /// The text of `argument`, or of standard input when it is nil or `-`.
    ///
    /// - Throws: ``ClientInputError`` when standard input cannot be read (`< somedir`):
    ///   Foundation's `readDataToEndOfFile()` trapped there.
    public static func input(_ argument: String?) throws -> String {
        guard let argument, argument != "-" else {
            do {
                return String(decoding: try FileHandle.standardInput.readToEnd() ?? Data(), as: UTF8.self)
            } catch {
                throw ClientInputError("cannot read standard input: \(systemReason(error))")
            }
        }
        return argument
    }

    /// What the system said, for a Foundation file error wrapping a POSIX one ("Is a
    /// directory"), else the error itself.
    static func systemReason(_ error: any Error) -> String {
        posixCode(of: error).map { String(cString: strerror($0)) } ?? "\(error)"
    }

    /// The POSIX error (`errno`) a Foundation file error wraps, if any.
    static func posixCode(of error: any Error) -> Int32? {
        guard let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError,
            underlying.domain == NSPOSIXErrorDomain
        else { return nil }
        return Int32(underlying.code)
    }

    /// A JSON object of column values from the command line.
    public static func values(_ text: String) throws -> JSONValue {
        let value: JSONValue
        do {
            value = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        } catch let error as DecodingError {
            throw ClientInputError("values must be a JSON object such as '{\"total\":12.5}': \(BatchFile.reason(error))")
        } catch {
            throw ClientInputError("values must be a JSON object such as '{\"total\":12.5}': \(error)")
        }
        guard case .object = value else {
            throw ClientInputError("values must be a JSON object such as '{\"total\":12.5}', not \(value.typeName)")
        }
        return value
    }
}
