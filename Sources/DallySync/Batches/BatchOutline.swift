import DallyCore

/// The row ids of a batch, section by section in order: what a client needs besides the
/// answer to name every result, since the cloud answers runs of accepted rows without ids.
public struct BatchOutline: Sendable, Equatable {
    public struct Section: Sendable, Equatable {
        public var table: String
        public var ids: [String]

        public init(table: String, ids: [String]) {
            self.table = table
            self.ids = ids
        }
    }

    public var sections: [Section]

    public init(sections: [Section]) {
        self.sections = sections
    }

    /// The outline of a batch body as sent, read without checking anything else of it: the
    /// gateway keeps only the bytes of a batch in flight, and they are its own.
    public static func read(_ document: JSONValue) throws(DallyError) -> BatchOutline {
        let root = try WireObject(document, path: "")
        var sections: [Section] = []
        for (s, element) in try root.array("sections").enumerated() {
            let object = try WireObject(element, path: "sections[\(s)]")
            var ids: [String] = []
            for (r, row) in try object.array("rows").enumerated() {
                guard case .array(let items) = row, case .string(let id)? = items.first else {
                    throw WireError.malformed("sections[\(s)].rows[\(r)]", "expected a row starting with its id")
                }
                ids.append(id)
            }
            sections.append(Section(table: try object.string("table"), ids: ids))
        }
        return BatchOutline(sections: sections)
    }
}

extension BatchRequest {
    /// This batch's row ids, section by section.
    public var outline: BatchOutline {
        BatchOutline(sections: sections.map { .init(table: $0.table, ids: $0.changes.map(\.id)) })
    }
}
