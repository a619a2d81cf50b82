import DallySync

/// `/stats` `tables.<name>.cloud_declaration`: `{"differences","held","message"}`, the codes
/// of what differs (gravest first) and what waits until the declarations agree (`uploads`,
/// `pulls` or both); null when the table's declaration agrees with the cloud's (or the cloud
/// was not asked yet).
struct CloudDeclarationStats: Encodable {
    let differences: [String]
    let held: [String]
    let message: String

    init(_ difference: DeclarationDifference) {
        self.differences = difference.codes
        self.held = difference.held
        self.message = difference.message
    }
}
