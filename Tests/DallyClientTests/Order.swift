import DallyClient

/// The app's type for the `orders` table.
struct Order: Codable, Sendable, Equatable {
    struct Item: Codable, Sendable, Equatable {
        var sku: String
        var qty: Int
    }

    var customer: String?
    var total: Double?
    var paid: Bool?
    var items: [Item]?
    var qty: Int?
}
