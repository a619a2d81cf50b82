/// `{"availability":…}`.
struct UplinkOverride: Encodable {
    let availability: UplinkAvailability
}
