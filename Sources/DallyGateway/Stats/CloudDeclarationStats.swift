import DallySync

/// `/stats` `tables.<name>.cloud_declaration`: `{"difference","held","message"}`, or null
/// when the table's declaration agrees with the cloud's (or the cloud was not asked yet).
struct CloudDeclarationStats: Encodable {
    let difference: String
    let held: Bool
    let message: String

    init(_ difference: DeclarationDifference) {
        self.difference = difference.code
        self.held = difference.holdsTable
        self.message = difference.message
    }
}
