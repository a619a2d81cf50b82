extension DecodingError.Context {
    /// Where in the document the error is, as a reader writes it: `tables[0].columns[2].name`;
    /// empty at the document's root.
    ///
    /// ```swift
    /// catch let DecodingError.typeMismatch(_, context) { print(context.memberPath) }   // tables[0].name
    /// ```
    public var memberPath: String {
        var path = ""
        for key in codingPath {
            if let index = key.intValue {
                path += "[\(index)]"
            } else {
                path += (path.isEmpty ? "" : ".") + key.stringValue
            }
        }
        return path
    }
}
