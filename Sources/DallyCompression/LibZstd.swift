import CZstd

/// Conversions between libzstd's C conventions and Swift, shared by the encoder and decoder.
enum LibZstd {
    /// libzstd's description of an error code (a `size_t` for which `ZSTD_isError` is true).
    static func errorName(_ code: Int) -> String {
        String(cString: ZSTD_getErrorName(code))
    }
}
