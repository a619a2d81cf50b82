import ArgumentParser
import DallyCloud
import DallyConfig
import DallyStore
import Foundation
import DallyConfig
import DallyLogging
import Logging

/// What every command does at start: read a configuration (exit 2 if refused), set up
/// logging, open a store (exit 3 if it cannot be opened).
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
}
