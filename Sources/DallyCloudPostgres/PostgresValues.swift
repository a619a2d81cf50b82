import DallyCore
import NIOCore
import PostgresNIO

/// Conversions between ``Value`` and PostgreSQL binds and cells, for the column types of
/// ``PostgresTableSQL/storageType(_:)``.
package enum PostgresValues {
    package static func bind(_ value: Value, into binds: inout PostgresBindings) {
        switch value {
        case .null: binds.appendNull()
        case .integer(let i): binds.append(i)
        case .real(let d): binds.append(d)
        case .text(let s), .json(let s): binds.append(s)
        case .boolean(let b): binds.append(Int64(b ? 1 : 0))
        case .blob(let bytes): binds.append(ByteBuffer(bytes: bytes))
        }
    }

    /// Reads a column of `type` as the store wrote it.
    static func value(_ cell: PostgresCell, type: ColumnType) throws -> Value {
        guard cell.bytes != nil else { return .null }
        switch type {
        case .integer: return .integer(try cell.decode(Int64.self))
        case .boolean: return .boolean(try cell.decode(Int64.self) != 0)
        case .real: return .real(try cell.decode(Double.self))
        case .text: return .text(try cell.decode(String.self))
        // An OBJECT column holds its reference's JSON text, shown in rows as that object.
        case .json, .object: return .json(try cell.decode(String.self))
        case .blob:
            var buffer = try cell.decode(ByteBuffer.self)
            return .blob(buffer.readBytes(length: buffer.readableBytes) ?? [])
        }
    }

    /// A `bytea` cell's bytes.
    static func bytes(_ cell: PostgresCell) throws -> [UInt8] {
        var buffer = try cell.decode(ByteBuffer.self)
        return buffer.readBytes(length: buffer.readableBytes) ?? []
    }
}
