import DallySync

/// `/stats` `tables.<name>.cloud_declaration`: `{"difference","held","message"}`, `held` being
/// what waits (`["uploads"]`, or `["uploads","pulls"]` when types differ); null when the
/// table's declaration agrees with the cloud's (or the cloud was not asked yet).
struct CloudDeclarationStats: Encodable {
    let difference: String
    let held: [String]
    let message: String

    init(_ difference: DeclarationDifference) {
        self.difference = difference.code
        self.held = difference.holdsTable ? ["uploads", "pulls"] : ["uploads"]
        self.message = difference.message
    }
}
