import DallyCore
import NIOCore
import PostgresNIO

/// One column of a batch's writes as a single PostgreSQL array parameter, nulls included, in
/// the binary array format: what `unnest($1::bigint[], $2::text[], …)` turns back into rows.
///
/// A batch's rows go to PostgreSQL as one array per column rather than one parameter per cell
/// because the server's cost for a multi-row `VALUES` list grows with its parameters: for
/// 1,000 rows of ten columns, parsing and binding 10,000 parameters took as long as the insert
/// itself (docs/BENCHMARKS.md, "The cloud on PostgreSQL"). With arrays the statement's text is
/// the same for every batch of a table and the parameters are a dozen whatever the rows.
/// PostgresNIO encodes arrays of non-optional elements only; a column holds nulls, hence this.
///
/// ```swift
/// var quantities = PostgresColumnArray(.integer)
/// quantities.append(.integer(3))
/// quantities.append(.null)
/// binds.append(quantities)          // bound as `$n::bigint[]`
/// ```
package struct PostgresColumnArray: PostgresDynamicTypeEncodable {
    /// How one element is stored, after ``PostgresTableSQL/storageType(_:)``.
    package enum Element {
        case bigint, double, text, bytea

        init(_ type: ColumnType) {
            switch type {
            case .integer, .boolean: self = .bigint
            case .real: self = .double
            case .text, .json, .object: self = .text
            case .blob: self = .bytea
            }
        }

        var type: PostgresDataType {
            switch self {
            case .bigint: .int8
            case .double: .float8
            case .text: .text
            case .bytea: .bytea
            }
        }

        var arrayType: PostgresDataType {
            switch self {
            case .bigint: .int8Array
            case .double: .float8Array
            case .text: .textArray
            case .bytea: .byteaArray
            }
        }
    }

    let element: Element
    private(set) var count = 0
    private var hasNull = false
    /// Each element as the array format wants it: its length (-1 for null), then its bytes.
    private var elements = ByteBuffer()

    package init(of element: Element) {
        self.element = element
    }

    package init(_ type: ColumnType) {
        self.init(of: Element(type))
    }

    package var psqlType: PostgresDataType { element.arrayType }
    package var psqlFormat: PostgresFormat { .binary }

    /// Appends a value, which must be of the array's element kind or null (a value of another
    /// kind is stored as null: the decoder has already checked each value against its column).
    package mutating func append(_ value: Value) {
        count += 1
        switch (element, value) {
        case (.bigint, .integer(let i)): appendFixed(i)
        case (.bigint, .boolean(let b)): appendFixed(Int64(b ? 1 : 0))
        case (.double, .real(let d)): appendFixed(d.bitPattern)
        case (.double, .integer(let i)): appendFixed(Double(i).bitPattern)
        case (.text, .text(let s)), (.text, .json(let s)): appendBytes(s.utf8)
        case (.bytea, .blob(let bytes)): appendBytes(bytes)
        default:
            hasNull = true
            elements.writeInteger(Int32(-1))
        }
    }

    package mutating func append(_ text: String) {
        count += 1
        appendBytes(text.utf8)
    }

    package mutating func append(_ integer: Int64) {
        count += 1
        appendFixed(integer)
    }

    private mutating func appendFixed<I: FixedWidthInteger>(_ value: I) {
        elements.writeInteger(Int32(MemoryLayout<I>.size))
        elements.writeInteger(value)
    }

    private mutating func appendBytes<C: Collection<UInt8>>(_ bytes: C) {
        elements.writeInteger(Int32(bytes.count))
        elements.writeBytes(bytes)
    }

    package func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        // Dimensions, whether any element is null, the element type; then, for a non-empty
        // array, its one dimension's length and lower bound (1), then the elements.
        buffer.writeInteger(Int32(count == 0 ? 0 : 1))
        buffer.writeInteger(Int32(hasNull ? 1 : 0))
        buffer.writeInteger(element.type.rawValue)
        guard count > 0 else { return }
        buffer.writeInteger(Int32(count))
        buffer.writeInteger(Int32(1))
        var copy = elements
        buffer.writeBuffer(&copy)
    }
}
