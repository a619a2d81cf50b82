import ArgumentParser
import DallyCloud
import DallyConfig
import DallyStore
import Foundation
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

    static func bootstrapLogging(level: String) {
        let level = Logger.Level(rawValue: level) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
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
