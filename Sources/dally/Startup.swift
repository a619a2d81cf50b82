import ArgumentParser
import DallyCloud
import DallyCloudPostgres
import DallyConfig
import DallyHTTPClientErrors
import DallyLogging
import DallyStore
import Foundation
import Logging
import NIOCore

/// What every command does at start: read a configuration (exit 2 if refused), set up
/// logging, open a store (exit 3 if it cannot be opened, exit 4 if its database server cannot
/// be reached), listen (exit 5 if the address cannot be had).
enum Startup {
    static func load<T>(_ read: () throws(ConfigError) -> T) throws -> T {
        do {
            return try read()
        } catch {
            StandardError.line("dally: configuration refused: \(error)")
            throw ExitCode(2)
        }
    }

    static func bootstrapLogging(_ server: ServerSettings) {
        LogOutput.bootstrap(level: server.logLevel, format: server.logFormat)
    }

    static func open<T>(_ what: String, in directory: String, replica: Bool, _ make: () throws -> T) throws -> T {
        do {
            return try make()
        } catch let error as StoreError {
            StandardError.line("dally: cannot open \(what): \(error)")
            throw ExitCode(3)
        } catch {
            try refuseDamaged(error, what, in: directory, replica: replica)
        }
    }

    /// A database file SQLite finds damaged is exit 3 with what to do; any other error as it is.
    private static func refuseDamaged(_ error: any Error, _ what: String, in directory: String, replica: Bool) throws -> Never {
        guard let damaged = StoreError.damaged(error, in: directory, replica: replica) else { throw error }
        StandardError.line("dally: cannot open \(what): \(damaged)")
        throw ExitCode(3)
    }

    /// ``open(_:_:)`` for a store opened asynchronously, such as the cloud's on PostgreSQL.
    static func open<T>(_ what: String, in directory: String, replica: Bool, _ make: () async throws -> T) async throws -> T {
        do {
            return try await make()
        } catch let error as StoreError {
            StandardError.line("dally: cannot open \(what): \(error)")
            throw ExitCode(3)
        } catch let error as PostgresStoreError {
            StandardError.line("dally: cannot open \(what): \(error)")
            throw ExitCode(error.unreachable ? 4 : 3)
        } catch {
            try refuseDamaged(error, what, in: directory, replica: replica)
        }
    }

    /// Runs a server until it stops, telling a listener that could not start in words an
    /// operator acts on (exit 5): the port taken, an address no interface has, a host name that
    /// does not resolve. They came out as NIO's `Error: bind(descriptor:ptr:bytes:): Address
    /// already in use) (errno: 98)`, exit 1.
    static func serve(on address: String, _ run: () async throws -> Void) async throws {
        do {
            try await run()
        } catch let error as IOError {
            guard let hint = listenHints[error.errnoCode] else { throw error }
            StandardError.line(
                "dally: cannot listen on \(address): \(TransportFailure.describe(error)); \(hint)")
            throw ExitCode(5)
        } catch let error as SocketAddressError.UnknownHost {
            StandardError.line(
                "dally: cannot listen on \(address): host '\(error.host)' does not resolve (\(error.errorDescription)); set [server] host to an address of this machine")
            throw ExitCode(5)
        }
    }

    private static let listenHints: [CInt: String] = [
        EADDRINUSE: "another process listens there: stop it, or choose another [server] port",
        EADDRNOTAVAIL: "no interface of this machine has that address: set [server] host to one that does, or 0.0.0.0",
        EACCES: "a port below 1024 needs privileges: choose a higher [server] port, or grant the binary CAP_NET_BIND_SERVICE",
    ]
}
