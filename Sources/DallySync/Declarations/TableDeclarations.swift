import DallyCore
import Foundation

/// The tables one side declares: each table's columns and their types, in declaration order,
/// and its scope columns. `GET /v1/tables` answers the cloud's (PROTOCOL.md §7.5), where
/// `scope_columns` are the columns it serves scoped pages on; a gateway tells its own with
/// `POST /v1/tables`, where they are the columns its `scope` names.
///
/// A gateway reads the cloud's at its first contact and holds a table whose columns the cloud
/// types otherwise (``DeclarationDifference``), instead of sending values the cloud refuses
/// and keeping values of the cloud's it cannot hold; the cloud keeps each gateway's
/// (``ToldDeclarations``) to show which sites are behind or ahead of it.
///
/// ```swift
/// let declared = TableDeclarations(schemas: config.tables)
/// // {"tables":[{"columns":[{"name":"customer","type":"TEXT"}],"name":"orders","scope_columns":[]}],"version":"0.9.0"}
/// ```
public struct TableDeclarations: Codable, Sendable, Equatable {
    public struct Table: Codable, Sendable, Equatable {
        public let name: String
        public let columns: [DeclaredColumn]
        /// The cloud's: the columns gateways may scope the table on (its `scope_columns`); a
        /// gateway's: the columns its `scope` names.
        public let scopeColumns: [String]

        public init(name: String, columns: [DeclaredColumn], scopeColumns: [String] = []) {
            self.name = name
            self.columns = columns
            self.scopeColumns = scopeColumns
        }

        init(schema: TableSchema, scopeColumns: [String]) {
            self.init(
                name: schema.name, columns: schema.columns.map { DeclaredColumn(name: $0.name, type: $0.type.rawValue) },
                scopeColumns: scopeColumns)
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
    /// The Dally version of the side that declares them (``DallyVersion/current``); absent
    /// from a document an older version wrote. The cloud shows each gateway's in its `/stats`.
    public let version: String?

    public init(tables: [Table], version: String? = nil) {
        self.tables = tables
        self.version = version
    }

    /// The declarations of `schemas`, as a cloud configured with them answers.
    public init(schemas: [TableSchema]) {
        self.tables = schemas.map { Table(schema: $0, scopeColumns: $0.scopeColumns) }
        version = DallyVersion.current
    }

    /// The declarations a gateway configured with `schemas` tells its cloud: its synced
    /// tables, each with the columns its scope names.
    public init(gateway schemas: [TableSchema]) {
        self.tables = schemas.filter { !$0.policy.localOnly }.map { Table(schema: $0, scopeColumns: $0.scope?.columns ?? []) }
        version = DallyVersion.current
    }

    /// The document as stored and sent: JSON, members sorted.
    public func encoded() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Array(try encoder.encode(self))
    }

    /// Reads a document ``encoded()`` or a peer sent.
    public init(document: [UInt8]) throws {
        self = try JSONDecoder().decode(TableDeclarations.self, from: Data(document))
    }

    /// The table named `name`, its name compared as the configuration does (ignoring case).
    public func table(named name: String) -> Table? {
        tables.first { $0.name.lowercased() == name.lowercased() }
    }
}
