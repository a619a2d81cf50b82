import DallyClient
import Foundation
import Testing

/// A feed's `left` entry decodes as a row that is gone, with `left` set; an ordinary row has it
/// unset.
@Suite struct LeftEntryDecodingTests {
    @Test func aLeftEntryDecodesAsAGoneRow() throws {
        let json = #"{"table":"orders","id":"o1","seq":42,"updated_at":7,"deleted":true,"version":null,"values":{},"left":true}"#
        let row = try JSONDecoder().decode(Row<Order>.self, from: Data(json.utf8))
        #expect(row.left && row.deleted && row.values == nil && row.seq == 42)
        let plain = #"{"id":"o2","seq":3,"updated_at":7,"deleted":true,"version":1,"values":{}}"#
        #expect(try JSONDecoder().decode(Row<Order>.self, from: Data(plain.utf8)).left == false)
    }
}
