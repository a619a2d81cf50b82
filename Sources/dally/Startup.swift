import ArgumentParser
import DallyCloud
import DallyCloudPostgres
import DallyConfig
import DallyStore
import Foundation
import DallyConfig
import DallyLogging
import Logging

/// What every command does at start: read a configuration (exit 2 if refused), set up
/// logging, open a store (exit 3 if it cannot be opened, exit 4 if its database server cannot
/// be reached).
enum Startup {
    static func load<T>(_ read: () throws(ConfigError) -> T) throws -> T {
        do {
            return try read()
        } catch {
            FileHandle.standardError.write(Data("dally: configuration refused: \(error)\n".utf8))
            throw ExitCode(2)
        }
    }

    static func bootstrapLogging(_ server: ServerSettings) {
        LogOutput.bootstrap(level: server.logLevel, format: server.logFormat)
    }

    static func open<T>(_ what: String, _ make: () throws -> T) throws -> T {
        do {
            return try make()
        } catch let error as StoreError {
            FileHandle.standardError.write(Data("dally: cannot open \(what): \(error)\n".utf8))
            throw ExitCode(3)
        }
    }

    /// ``open(_:_:)`` for a store opened asynchronously, such as the cloud's on PostgreSQL.
    static func open<T>(_ what: String, _ make: () async throws -> T) async throws -> T {
        do {
            return try await make()
        } catch let error as StoreError {
            FileHandle.standardError.write(Data("dally: cannot open \(what): \(error)\n".utf8))
            throw ExitCode(3)
        } catch let error as PostgresStoreError {
            FileHandle.standardError.write(Data("dally: cannot open \(what): \(error)\n".utf8))
            throw ExitCode(error.unreachable ? 4 : 3)
        }
    }
}
