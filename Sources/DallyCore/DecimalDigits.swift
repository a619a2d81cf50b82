/// A decimal number's value as its significant digits and a power of ten: what two spellings of
/// one number share (`1.50`, `15e-1` and `0.15E1` alike), so that the parser can tell whether the
/// Double it read a number into gives back the number that was sent.
///
/// ```swift
/// DecimalDigits("12345678901234567890".utf8) == DecimalDigits("1.2345678901234567e+19".utf8)  // false
/// DecimalDigits("0.10".utf8) == DecimalDigits("0.1".utf8)                                      // true
/// ```
struct DecimalDigits: Equatable {
    private var negative = false
    /// The significant digits, without leading or trailing zeros: empty for zero.
    private var digits: [UInt8] = []
    /// The value is `0.<digits> × 10^exponent`.
    private var exponent = 0

    /// Reads a number as JSON writes it, or as Swift's `Double.description` does (`1e+21`,
    /// `5e-324`, `100.0`); zero has no sign.
    init(_ text: some Collection<UInt8>) {
        var pointAt: Int?
        var leadingZeros = 0
        var seen = 0
        var iterator = text.makeIterator()
        var written = 0
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "-"): negative = true
            case UInt8(ascii: "+"): break
            case UInt8(ascii: "."): pointAt = seen
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if digits.isEmpty && byte == UInt8(ascii: "0") {
                    leadingZeros += 1
                } else {
                    digits.append(byte)
                }
                seen += 1
            case UInt8(ascii: "e"), UInt8(ascii: "E"):
                written = Self.exponent(&iterator)
            default: break
            }
        }
        // Digits before the point, less the zeros that lead them, place the first significant one.
        exponent = (pointAt ?? seen) - leadingZeros + written
        while digits.last == UInt8(ascii: "0") { digits.removeLast() }
        if digits.isEmpty {
            negative = false
            exponent = 0
        }
    }

    /// Reads an exponent's sign and digits; large ones are capped, as no finite Double has them.
    private static func exponent(_ iterator: inout some IteratorProtocol<UInt8>) -> Int {
        var value = 0
        var negative = false
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "-"): negative = true
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = min(value * 10 + Int(byte - UInt8(ascii: "0")), 1_000_000)
            default: break
            }
        }
        return negative ? -value : value
    }
}
