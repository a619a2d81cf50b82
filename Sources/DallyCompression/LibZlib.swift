import CZlib

/// Conversions between zlib's C conventions and Swift, shared by the encoder and decoder.
enum LibZlib {
    /// `input` from `offset` as zlib's `next_in`, which is not const-qualified although zlib
    /// only reads through it.
    static func nextIn(_ input: UnsafeRawBufferPointer, at offset: Int) -> UnsafeMutablePointer<Bytef>? {
        input.baseAddress.map {
            UnsafeMutableRawPointer(mutating: $0 + offset).assumingMemoryBound(to: Bytef.self)
        }
    }

    /// zlib's message for the last error on `stream`, or the bare return code when it set none.
    static func message(_ stream: UnsafeMutablePointer<z_stream>, _ code: Int32) -> String {
        stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(code)"
    }
}
