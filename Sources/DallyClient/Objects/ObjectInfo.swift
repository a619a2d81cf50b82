/// An object as the gateway names it: its SHA-256 (what `sha256sum` prints), size, and the
/// number of chunks it is stored in. An `OBJECT` column's value has this shape.
///
/// For example:
/// ```swift
/// struct Photo: Codable, Sendable { var caption: String?; var image: ObjectInfo? }
/// let row = try await photos.uploadObject(id: "p1", column: "image", file: "/tmp/cat.jpg")
/// print(row.values?.image?.hash ?? "")
/// ```
public struct ObjectInfo: Codable, Sendable, Equatable {
    /// 64 lowercase hex digits.
    public let hash: String
    /// The object's length in bytes.
    public let size: Int64
    /// 0 when not known (a download's headers do not say).
    public let chunks: Int

    /// A reference with these parts.
    public init(hash: String, size: Int64, chunks: Int) {
        self.hash = hash
        self.size = size
        self.chunks = chunks
    }

    /// A reference to name an uploaded object in a row write: `{"hash": …}`.
    ///
    /// For example: `try await photos.patch(id: "p2", ["image": ObjectInfo.named(info.hash)])`.
    public static func named(_ hash: String) -> ObjectName { ObjectName(hash: hash) }
}
