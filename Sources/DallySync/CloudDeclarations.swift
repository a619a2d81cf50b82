import DallyCore

/// The tables a cloud declares, as `GET /v1/tables` answers them (PROTOCOL.md §7.5): each
/// table's columns and their types, in declaration order, and the columns it serves scoped
/// pages on.
///
/// A gateway reads it at its first contact with the cloud and holds a table whose columns
/// the cloud types otherwise (``DeclarationDifference``), instead of sending values the cloud
/// refuses and keeping values of the cloud's it cannot hold.
///
/// ```swift
/// let declared = CloudDeclarations(schemas: config.tables)
/// // {"tables":[{"columns":[{"name":"customer","type":"TEXT"}],"name":"orders","scope_columns":[]}]}
/// ```
public struct CloudDeclarations: Codable, Sendable, Equatable {
    public struct Table: Codable, Sendable, Equatable {
        public let name: String
        public let columns: [DeclaredColumn]
        /// The columns gateways may scope the table on (its `scope_columns`).
        public let scopeColumns: [String]

        public init(name: String, columns: [DeclaredColumn], scopeColumns: [String] = []) {
            self.name = name
            self.columns = columns
            self.scopeColumns = scopeColumns
        }

        enum CodingKeys: String, CodingKey {
            case name, columns
            case scopeColumns = "scope_columns"
        }
    }

    /// A column as the cloud declares it. The type is a string, not a ``ColumnType``: a newer
    /// cloud may declare a type this gateway does not know, which is then a difference, not
    /// an answer it cannot read.
    public struct DeclaredColumn: Codable, Sendable, Equatable {
        public let name: String
        public let type: String

        public init(name: String, type: String) {
            self.name = name
            self.type = type
        }
    }

    public let tables: [Table]

    public init(tables: [Table]) { self.tables = tables }

    /// The declarations of `schemas`, as a cloud configured with them answers.
    public init(schemas: [TableSchema]) {
        self.tables = schemas.map { schema in
            Table(
                name: schema.name, columns: schema.columns.map { DeclaredColumn(name: $0.name, type: $0.type.rawValue) },
                scopeColumns: schema.scopeColumns)
        }
    }

    /// The table named `name`, its name compared as the configuration does (ignoring case).
    public func table(named name: String) -> Table? {
        tables.first { $0.name.lowercased() == name.lowercased() }
    }
}
