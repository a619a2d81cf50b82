import DallyCore

/// The tables a cloud declares, as `GET /v1/tables` answers them (PROTOCOL.md §7.5): each
/// table's columns and their types, in declaration order.
///
/// A gateway reads it at its first contact with the cloud and holds a table whose columns
/// the cloud types otherwise (``DeclarationDifference``), instead of sending values the cloud
/// refuses and keeping values of the cloud's it cannot hold.
///
/// ```swift
/// let declared = CloudDeclarations(schemas: config.tables)
/// // {"tables":[{"columns":[{"name":"customer","type":"TEXT"}],"name":"orders"}]}
/// ```
public struct CloudDeclarations: Codable, Sendable, Equatable {
    public struct Table: Codable, Sendable, Equatable {
        public let name: String
        public let columns: [DeclaredColumn]

        public init(name: String, columns: [DeclaredColumn]) {
            self.name = name
            self.columns = columns
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
            Table(name: schema.name, columns: schema.columns.map { DeclaredColumn(name: $0.name, type: $0.type.rawValue) })
        }
    }

    /// The table named `name`, its name compared as the configuration does (ignoring case).
    public func table(named name: String) -> Table? {
        tables.first { $0.name.lowercased() == name.lowercased() }
    }
}
