import GRDB

/// Brings a database's schema up to this build's, and refuses one a newer build wrote.
///
/// Upgrades run at start, in one transaction per migration. A database that has migrations
/// this build does not know was written by a newer Dally: opening it with an older one could
/// misread it, so it is refused with what to do (run the newer version, or restore a backup
/// taken with this one).
package enum SchemaUpgrade {
    /// - Throws: ``StoreError`` for a database from a newer build.
    package static func apply(_ migrator: DatabaseMigrator, to pool: DatabasePool, file: String) throws {
        let unknown = try pool.read { db in
            try migrator.appliedIdentifiers(db).subtracting(Set(migrator.migrations))
        }
        guard unknown.isEmpty else {
            throw StoreError(
                "\(file) was written by a newer version of Dally (schema steps this build does not know: \(unknown.sorted().joined(separator: ", "))); "
                    + "downgrading is not supported: run the newer version, or restore a backup taken with this one (docs/OPERATIONS.md)")
        }
        try migrator.migrate(pool)
    }
}
