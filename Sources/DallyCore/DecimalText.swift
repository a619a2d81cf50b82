/// Whether a Double gives back the number a text wrote, digit for digit: what decides if the
/// parser may keep a number as a `Double` or must keep its text (``JSONValue/number(_:)``).
///
/// At most 15 significant digits (trailing zeros aside), every decimal in the normal range is the
/// shortest text of the Double nearest it, so it comes back as written; more than 17 never do.
/// Only 16 or 17, and numbers below the normal range (an underflow to zero, a subnormal holding
/// fewer digits), are compared with the Double's shortest text (`description`), without making
/// arrays of either: the first version did, and parsed a document of such numbers 8× slower.
///
/// ```swift
/// DecimalText.isHeld("3.141592653589793", by: .pi)                                  // true
/// DecimalText.isHeld("12345678901234567890", by: 12345678901234567890.0)            // false
/// ```
enum DecimalText {
    static func isHeld(_ text: UnsafeRawBufferPointer, by double: Double) -> Bool {
        let written = Shape(text)
        if written.significant == 0 { return true }
        guard written.significant <= 17 else { return false }
        if written.significant <= 15, abs(double) >= Double.leastNormalMagnitude { return true }
        var shortest = double.description
        return shortest.withUTF8 { bytes in
            let printed = UnsafeRawBufferPointer(bytes)
            return Shape(printed).exponent == written.exponent && Shape.sameDigits(text, printed)
        }
    }

    static func isHeld(_ text: String, by double: Double) -> Bool {
        var text = text
        return text.withUTF8 { isHeld(UnsafeRawBufferPointer($0), by: double) }
    }

    /// How many significant digits a number's text has (trailing zeros aside), and where its
    /// first one stands: the value is `0.d₁d₂… × 10^exponent`.
    private struct Shape {
        var significant = 0
        var exponent = 0

        init(_ text: UnsafeRawBufferPointer) {
            var seen = 0
            var leadingZeros = 0
            var pointAt: Int?
            var zerosAfter = 0
            var index = 0
            while index < text.count {
                let byte = text[index]
                index += 1
                switch byte {
                case UInt8(ascii: "."): pointAt = seen
                case UInt8(ascii: "0"):
                    if significant == 0 { leadingZeros += 1 } else { zerosAfter += 1 }
                    seen += 1
                case UInt8(ascii: "1")...UInt8(ascii: "9"):
                    significant += zerosAfter + 1
                    zerosAfter = 0
                    seen += 1
                case UInt8(ascii: "e"), UInt8(ascii: "E"):
                    exponent = Self.exponent(text, from: index)
                    index = text.count
                default: break
                }
            }
            exponent += (pointAt ?? seen) - leadingZeros
            if significant == 0 { exponent = 0 }
        }

        private static func exponent(_ text: UnsafeRawBufferPointer, from start: Int) -> Int {
            var value = 0
            var negative = false
            for byte in text[start...] {
                switch byte {
                case UInt8(ascii: "-"): negative = true
                case UInt8(ascii: "0")...UInt8(ascii: "9"): value = min(value * 10 + Int(byte - UInt8(ascii: "0")), 1_000_000)
                default: break
                }
            }
            return negative ? -value : value
        }

        /// Whether two numbers' texts have the same significant digits, trailing zeros aside.
        static func sameDigits(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
            var i = a.startIndex
            var j = b.startIndex
            var startedA = false
            var startedB = false
            while true {
                let x = next(a, &i, started: &startedA)
                let y = next(b, &j, started: &startedB)
                if x == nil, y == nil { return true }
                // Past one's last digit, the other may have only zeros left.
                if x != y, (x ?? UInt8(ascii: "0")) != (y ?? UInt8(ascii: "0")) { return false }
            }
        }

        /// The next significant digit's byte of `text` from `index`, nil at its end or exponent.
        private static func next(_ text: UnsafeRawBufferPointer, _ index: inout Int, started: inout Bool) -> UInt8? {
            while index < text.count {
                let byte = text[index]
                index += 1
                if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
                    index = text.count
                    return nil
                }
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { continue }
                if !started, byte == UInt8(ascii: "0") { continue }
                started = true
                return byte
            }
            return nil
        }
    }
}
