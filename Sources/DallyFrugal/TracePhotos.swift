import DallyCore

/// Photos: one row per photo a client takes, its metadata and its image, an object stored with
/// the row's first write (see ``TraceWorkload/photoObjectBytes``). The table's policies allow
/// wifi only, for rows and objects alike, so with partial wifi both wait out the outages. Some
/// photos get one later edit of caption and tags, which keeps the image.
struct TracePhotos {
    let clients: Int
    let duration: Int64
    var random: SplitMix64
    /// The images' sizes and seeds, drawn from a stream of their own so that the metadata
    /// stays what it was before photos had images.
    var objectRandom: SplitMix64
    /// False leaves the images out (the image column stays null).
    var images = true

    static let captions = [
        "Aisle 3 after restock", "Cold room shelf", "Damaged pallet on arrival", "Delivery at back door",
        "Window display", "Price labels, bakery", "Receipt for petty cash", "Shelf gap, dairy",
        "Loading bay", "Customer return", "Fridge temperature label", "New stock, beverages",
    ]
    static let tags = ["shelf", "price", "damage", "delivery", "display", "receipt", "stock", "return"]
    /// Common phone camera sizes, landscape and portrait.
    static let sizes: [(width: Int64, height: Int64)] = [
        (4_032, 3_024), (3_024, 4_032), (4_000, 3_000), (3_000, 4_000), (1_920, 1_080), (1_080, 1_920),
    ]

    mutating func writes() -> [TraceWrite] {
        let count = TraceWorkload.scaled(TraceWorkload.photosPerHour, clients: clients, duration: duration)
        var taken: [(at: Int64, client: Int)] = (0..<count).map { _ in
            (random.int64(in: 0...(duration - 1)), random.int(in: 0...(clients - 1)))
        }
        taken.sort { $0.at != $1.at ? $0.at < $1.at : $0.client < $1.client }
        var sequence = Array(repeating: 0, count: clients)
        var result: [TraceWrite] = []
        for photo in taken {
            sequence[photo.client] += 1
            let id = "p-\(photo.client)-\(sequence[photo.client])"
            // Taken up to 10 minutes before its row is written, in Unix seconds.
            let takenAt = (FrugalTrace.epochMillis + photo.at) / 1000 - random.int64(in: 5...600)
            let size = random.pick(Self.sizes)
            var values: [JSONValue] = [
                .string(random.pick(Self.captions)),
                .int(takenAt),
                .int(size.width),
                .int(size.height),
                .int(random.int64(in: 1_200_000...4_999_999)),
                .array(randomTags()),
                .null,
            ]
            let image = images ? randomImage() : nil
            result.append(
                TraceWrite(at: photo.at, client: photo.client, table: "photos", id: id, values: values, object: image))
            if random.chance(TraceWorkload.photoEditPercent) {
                let editedAt = photo.at + random.int64(in: TraceWorkload.photoEditDelay)
                values[0] = .string(random.pick(Self.captions))
                values[5] = .array(randomTags())
                if editedAt < duration {
                    result.append(
                        TraceWrite(
                            at: editedAt, client: photo.client, table: "photos", id: id, values: values, object: image))
                }
            }
        }
        return result
    }

    /// An image of ``TraceWorkload/photoObjectBytes``, log-uniform: one of 100 equal steps of
    /// the log scale, then uniform within the step. Plain double multiplications, which IEEE 754
    /// rounds the same everywhere.
    private mutating func randomImage() -> TraceObject {
        let bounds = TraceWorkload.photoObjectBytes
        let steps = 100
        let ratio = 1.0232929922807541  // 10^(1/100): 100 steps span a factor of 10
        var low = Double(bounds.lowerBound)
        for _ in 0..<objectRandom.int(in: 0...(steps - 1)) { low *= ratio }
        let from = min(Int(low), bounds.upperBound)
        let to = min(Int(low * ratio), bounds.upperBound)
        return TraceObject(size: objectRandom.int(in: from...to), seed: objectRandom.next())
    }

    /// Up to three distinct tags, in the list's order.
    private mutating func randomTags() -> [JSONValue] {
        let wanted = random.int(in: 0...3)
        var chosen: Set<Int> = []
        while chosen.count < wanted { chosen.insert(random.int(in: 0...(Self.tags.count - 1))) }
        return chosen.sorted().map { .string(Self.tags[$0]) }
    }
}
