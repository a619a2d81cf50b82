import DallyCore
import DallyStore
import Testing

@testable import DallyGateway

/// The request's envelope and its check against the table, without HTTP.
@Suite("TinySync requests")
struct TinySyncRequestTests {
    static let post = TableSchema(
        name: "post",
        columns: [Column(name: "author_id", type: .text), Column(name: "body", type: .text),
                  Column(name: "published_at", type: .integer), Column(name: "meta", type: .json)],
        conflict: .lastWriterWins,
        policy: SyncPolicy(
            localOnly: false, atomicSync: false, uploadRows: .init(maxDelay: .seconds(1), networks: ["lan"]),
            uploadObjects: .init(maxDelay: .seconds(1), networks: ["lan"]),
            downloadRows: .init(period: .seconds(1), networks: ["lan"]),
            downloadObjects: .init(period: .seconds(1), networks: ["lan"])))

    func request(_ text: String) throws -> TinySyncRequest {
        try TinySyncRequest(json: try JSONParser.parse(text))
    }

    func refusal(_ text: String) -> DallyError? {
        do {
            let sync = try request(text)
            for entity in sync.entities { _ = try TinySyncEntityPlan(entity, schema: Self.post) }
            return nil
        } catch let error as DallyError {
            return error
        } catch {
            return nil
        }
    }

    @Test func theSeedsRequestDecodes() throws {
        let sync = try request(TinySyncSeed.request)
        #expect(sync.lastSynced == TinySyncTime.parse("2014-02-14T09:12:43-0700"))
        let entity = try #require(sync.entities.first)
        #expect(entity.name == "post")
        #expect(entity.scope == [JSONMember("author_id", "52212589594cc44541000016")])
        let plan = try TinySyncEntityPlan(entity, schema: Self.post)
        #expect(plan.writes.map(\.id) == ["521fa720594cc48c1d000003", "521fa720594cc48c1d000016", "521fa720594cc48c1d000016"])
        #expect(plan.writes.map(\.kind) == [.put, .patch, .delete])
        #expect(plan.writes[0].updatedAt == TinySyncTime.parse("2014-02-17T17:23:54-0700"))
        #expect(plan.writes[0].values.map { $0.index } == [0, 1])
        #expect(plan.writes[0].values.map { $0.value } == [.text("52212589594cc44541000016"), .text("Some text in a new post...")])
        #expect(plan.filters.map { $0.column } == ["author_id"])
        #expect(plan.refused.isEmpty)
    }

    @Test func theSeedsResponseIsReadAsARequestToo() throws {
        // "The sync response format is identical to the sync request format" plus saved and errors.
        let sync = try request(TinySyncSeed.response)
        #expect(sync.entities.first?.created.count == 1)
    }

    @Test func badValuesRefuseTheRowAloneWithTheField() throws {
        let sync = try request(
            #"{"last_synced":null,"entities":[{"name":"post","created":[{"id":"a","body":5},{"id":"b","nope":1},{"id":"c","published_at":"2014-02-14T09:12:43-0700","meta":{"k":[1]}}]}]}"#)
        let plan = try TinySyncEntityPlan(try #require(sync.entities.first), schema: Self.post)
        #expect(plan.refused.map { $0.id } == ["a", "b"])
        #expect(plan.refused.map { $0.error.field } == ["body", "nope"])
        #expect(plan.refused.map { $0.error.code } == [.wrongType, .unknownColumn])
        #expect(plan.writes.map(\.id) == ["c"])
        #expect(plan.writes[0].values.map { $0.value } == [.integer(1_392_394_363_000), .json(#"{"k":[1]}"#)])
    }

    @Test func malformedRequestsNameThePlace() {
        let cases: [(String, String?)] = [
            (#"[]"#, nil),
            (#"{"entities":[]} "#.replacingOccurrences(of: "entities", with: "entitys"), "entitys"),
            (#"{"last_synced":"soon","entities":[]}"#, "last_synced"),
            (#"{"last_synced":5,"entities":[]}"#, "last_synced"),
            (#"{"last_synced":null}"#, "entities"),
            (#"{"entities":{}}"#, "entities"),
            (#"{"entities":[5]}"#, "entities[0]"),
            (#"{"entities":[{"scope":null}]}"#, "entities[0].name"),
            (#"{"entities":[{"name":"post","created":{}}]}"#, "entities[0].created"),
            (#"{"entities":[{"name":"post","colour":1}]}"#, "entities[0].colour"),
            (#"{"entities":[{"name":"post"},{"name":"post"}]}"#, "entities[1].name"),
            (#"{"entities":[{"name":"post","created":[{"id":"a"},{"id":"b"},{"id":"c","updated_at":"yesterday"}]}]}"#,
             "entities[0].created[2].updated_at"),
            (#"{"entities":[{"name":"post","updated":[{"body":"x"}]}]}"#, "entities[0].updated[0].id"),
            (#"{"entities":[{"name":"post","updated":[{"id":"a b"}]}]}"#, "entities[0].updated[0].id"),
            (#"{"entities":[{"name":"post","deleted":[7]}]}"#, "entities[0].deleted[0]"),
            (#"{"entities":[{"name":"post","scope":{"owner":"x"}}]}"#, "entities[0].scope.owner"),
            (#"{"entities":[{"name":"post","scope":{"meta":"x"}}]}"#, "entities[0].scope.meta"),
            (#"{"entities":[{"name":"post","scope":{"published_at":true}}]}"#, "entities[0].scope.published_at"),
            (#"{"entities":[{"name":"post","scope":[]}]}"#, "entities[0].scope"),
        ]
        for (body, field) in cases {
            let error = refusal(body)
            #expect(error != nil, "\(body)")
            #expect(error?.field == field, "\(body)")
            #expect(error.map { [.badRequest, .invalidID].contains($0.code) } == true, "\(body)")
        }
    }

    @Test func deletedEntriesMayBeObjectsAndListsMayBeNull() throws {
        let sync = try request(
            #"{"entities":[{"name":"post","scope":{"published_at":"2014-02-14T09:12:43Z"},"created":null,"deleted":[{"id":"x"},"y"]}]}"#)
        let plan = try TinySyncEntityPlan(try #require(sync.entities.first), schema: Self.post)
        #expect(sync.lastSynced == nil)
        #expect(plan.writes.map(\.id) == ["x", "y"])
        #expect(plan.filters.map { $0.value } == [.integer(1_392_369_163_000)])
    }
}
