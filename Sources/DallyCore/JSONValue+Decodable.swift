import Foundation

extension JSONValue: Decodable {
    /// Decodes any JSON value, so that a client can read rows whose columns it does not model
    /// (`client.table("orders", as: JSONValue.self)`, the command line). A decoder gives an
    /// object's keys in no promised order: members come in the decoder's order.
    public init(from decoder: any Decoder) throws {
        if let object = try? decoder.container(keyedBy: CodingName.self) {
            var members: [JSONMember] = []
            for key in object.allKeys {
                members.append(JSONMember(key.stringValue, try object.decode(JSONValue.self, forKey: key)))
            }
            self = .object(members)
            return
        }
        if var list = try? decoder.unkeyedContainer() {
            var elements: [JSONValue] = []
            while !list.isAtEnd { elements.append(try list.decode(JSONValue.self)) }
            self = .array(elements)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let value = try? single.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? single.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? single.decode(Double.self) {
            // Foundation reads a number's digits into a Decimal (38 of them): one the Double
            // does not give back keeps them, as ``JSONParser`` keeps them.
            if let decimal = try? single.decode(Decimal.self), !DecimalText.isHeld(decimal.description, by: value) {
                self = .number(decimal.description)
            } else {
                self = .double(value)
            }
        } else {
            self = .string(try single.decode(String.self))
        }
    }
}
