import DallyCore
import GRDB

/// SQLite's "database or disk is full" (`SQLITE_FULL`: the filesystem refused a write, or the
/// database reached its `max_page_count`) as an error a client can act on: `507
/// insufficient_storage`, saying whose disk and what to do, instead of `500 internal`. SQLite
/// rolled the transaction back: nothing of the write is saved, and everything committed before
/// stays readable.
///
/// ```swift
/// do { try await pool.write { db in … } } catch {
///     throw FullDisk.refusal(for: error, "the cloud's disk is full: …")
/// }
/// ```
package enum FullDisk {
    /// Whether `error` is SQLite's full disk.
    package static func matches(_ error: any Error) -> Bool {
        (error as? DatabaseError)?.resultCode == .SQLITE_FULL
    }

    /// `507 insufficient_storage` with `message` when `error` is a full disk, else `error`.
    package static func refusal(for error: any Error, _ message: @autoclosure () -> String) -> any Error {
        matches(error) ? DallyError(.insufficientStorage, message()) : error
    }
}
