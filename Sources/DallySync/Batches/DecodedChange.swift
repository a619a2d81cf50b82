import DallyCore
import DallyObjects

/// A change of a batch with its values read against the section's columns, and the objects
/// its OBJECT columns name: what every cloud store's batch applier writes.
public struct DecodedChange: Sendable {
    /// An object an OBJECT column of the change references.
    public struct ObjectUse: Sendable {
        public let column: String
        public let reference: ObjectReference
    }

    public let change: BatchRequest.Change
    /// One value per section column for a put; empty for a delete.
    public let values: [Value]
    /// Filled only when the caller asked for them (tables with `atomic_sync`).
    public let references: [ObjectUse]

    /// Checks the change's id and decodes its values against `columns`, the section's.
    ///
    /// - Returns: the decoded change, or the error to reject this one change with (the rest of
    ///   the batch goes on).
    public static func decode(
        _ change: BatchRequest.Change, columns: [Column], collectingObjects: Bool
    ) -> Result<DecodedChange, DallyError> {
        guard Identifier.isValidRowID(change.id) else {
            return .failure(DallyError(.invalidID, "'\(change.id)' is not a valid row id"))
        }
        guard !change.deleted else { return .success(DecodedChange(change: change, values: [], references: [])) }
        var values: [Value] = []
        values.reserveCapacity(columns.count)
        var references: [ObjectUse] = []
        do {
            for (value, column) in zip(change.values, columns) {
                let decoded = try Value(wire: value, for: column)
                if collectingObjects, column.type == .object, let reference = decoded.objectReference {
                    references.append(ObjectUse(column: column.name, reference: reference))
                }
                values.append(decoded)
            }
        } catch {
            return .failure(error)
        }
        return .success(DecodedChange(change: change, values: values, references: references))
    }
}
