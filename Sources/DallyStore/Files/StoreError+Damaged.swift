import GRDB

extension StoreError {
    /// The error a store's open met, said as what to do when it is SQLite finding a database
    /// file damaged (`SQLITE_CORRUPT`: a disk that lost writes, a file cut short; or
    /// `SQLITE_NOTADB`: something else in its place); nil for any other error.
    ///
    /// ```swift
    /// StoreError.damaged(error, in: "/var/lib/dally", replica: true)
    /// // "a database file in /var/lib/dally is damaged (SQLite: database disk image is malformed); …"
    /// ```
    /// - Parameter replica: a gateway's replica, which can also start afresh from the cloud.
    public static func damaged(_ error: any Error, in directory: String, replica: Bool) -> StoreError? {
        guard let error = error as? DatabaseError,
            error.resultCode == .SQLITE_CORRUPT || error.resultCode == .SQLITE_NOTADB
        else { return nil }
        return StoreError(
            """
            a database file in \(directory) is damaged (SQLite: \(error.message ?? "\(error.resultCode)")); \
            restore the data directory from a backup (dally backup)
            """ + (replica ? ", or move it aside to start afresh: the gateway gets its rows back from the cloud, but changes it had not synced are lost" : ""))
    }
}
