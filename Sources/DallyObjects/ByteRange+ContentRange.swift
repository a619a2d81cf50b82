extension ByteRange {
    /// The `Content-Range` value of a 206 answer: `bytes a-b/size`.
    public static func contentRange(_ range: ClosedRange<Int64>, size: Int64) -> String {
        "bytes \(range.lowerBound)-\(range.upperBound)/\(size)"
    }

    /// The `Content-Range` value of a 416 answer: `bytes */size`, so that the client learns
    /// the object's size and can ask again.
    public static func unsatisfiedContentRange(size: Int64) -> String {
        "bytes */\(size)"
    }
}
