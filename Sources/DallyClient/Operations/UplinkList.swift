/// `{"uplinks":[…]}`.
struct UplinkList: Decodable {
    let uplinks: [UplinkStatus]
}
