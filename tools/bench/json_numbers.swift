// The documents tools/bench/json_numbers.sh parses, built with DallyCore's sources into one program.
import Foundation
// Documents as clients send them: prices, counts, ids, and (second) floats of 16-17 digits.
func doc(_ i: Int, long: Bool) -> String {
    let price = long ? "\(1_701_234_567 + i).\(123_456 + i % 1000)" : "\(i % 997).\(i % 100)"
    let ratio = long ? "0.\(3_000_000_000_000_000 + i)" : "0.\(i % 1000)"
    return #"{"values":{"customer":"customer \#(i)","total":\#(price),"ratio":\#(ratio),"qty":\#(i % 50),"paid":true}}"#
}
for long in [false, true] {
    let docs = (0..<20_000).map { Array(doc($0, long: long).utf8) }
    var best = Double.infinity
    for _ in 0..<7 {
        let start = DispatchTime.now().uptimeNanoseconds
        var count = 0
        for d in docs { if case .object(let m) = try JSONParser.parse(d) { count += m.count } }
        let s = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        precondition(count == docs.count)
        best = min(best, s)
    }
    print(long ? "16-19 digit numbers" : "short numbers     ", String(format: "%.0f ns/doc", best * 1e9 / Double(docs.count)))
}
