/// Small helpers for the comma- and semicolon-separated lists of HTTP header values.
enum HTTPToken {
    /// `text` without leading or trailing optional whitespace (space and horizontal tab), the
    /// only whitespace HTTP allows around list elements and parameters.
    static func trimmed(_ text: some StringProtocol) -> Substring {
        let isOWS: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        let view = Substring(text)
        guard let first = view.firstIndex(where: { !isOWS($0) }),
              let last = view.lastIndex(where: { !isOWS($0) })
        else { return view[view.endIndex...] }
        return view[first...last]
    }
}
