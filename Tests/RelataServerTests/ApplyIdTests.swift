import Foundation
import Relata
@testable import RelataServer
import RelataServerTestSupport
import RelataTestSupport
import Testing

/// A batch of changes is applied once, however often its ``ApplyId`` comes: the server records
/// the id with its answer in the apply's own transaction, and answers a repeat from the record.
@Suite(.timeLimit(.minutes(5))) struct ApplyIdTests {
    static let ann = Session(values: ["User": "ann"], roles: [])
    static let bob = Session(values: ["User": "bob"], roles: [])

    /// A new row of a table whose key the database gives, as a delta of its own (what a client
    /// that added one row sends).
    static func newClient(_ name: String) -> Delta {
        Delta(tableName: "AuditLog", keyFields: ["LogId"], loggedFields: ["LogId", "Message"], changes: [
            DeltaChange(changeId: 1, type: .insert, newValues: ["LogId": .integer(-1), "Message": .string(name)]),
        ])
    }

    static func names(_ database: DataServiceTests.Database) throws -> [String] {
        try database.service.storedRows(of: "AuditLog").compactMap { $0["Message"]?.stringValue }
    }

    /// What an answer says, whatever order its JSON members came in.
    static func verdicts(_ answer: [Delta]) -> [String] {
        answer.flatMap { delta in
            delta.changes.map { "\(delta.tableName) \($0.changeId) \($0.status) \($0.refreshedValues.sorted { $0.key < $1.key }) \($0.message ?? "")" }
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func aRepeatedIdGetsTheFirstAnswerAndAppliesNothing(backend: StorageBackend) async throws {
        let database = try DataServiceTests.Database(backend: backend)
        let apply = ApplyId()
        let first = try await database.service.updateData([Self.newClient("Retry Corp")], session: Self.ann, apply: apply)
        let again = try await database.service.updateData([Self.newClient("Retry Corp")], session: Self.ann, apply: apply)
        #expect(first[0].changes[0].status == .resolved)
        #expect(Self.verdicts(again) == Self.verdicts(first), "the repeat is answered with the first answer, real key included")
        #expect(try Self.names(database).filter { $0 == "Retry Corp" }.count == 1)

        // Without an id every call applies: the old behaviour, for hand-made requests that want it.
        _ = try await database.service.updateData([Self.newClient("No Id")], session: Self.ann)
        _ = try await database.service.updateData([Self.newClient("No Id")], session: Self.ann)
        #expect(try Self.names(database).filter { $0 == "No Id" }.count == 2)
    }

    @Test(arguments: StorageBackend.allCases)
    func anIdIsTheUsersOwnAndStandsForOneBatch(backend: StorageBackend) async throws {
        let database = try DataServiceTests.Database(backend: backend)
        let apply = ApplyId()
        _ = try await database.service.updateData([Self.newClient("Ann's")], session: Self.ann, apply: apply)
        // Another user's batch under the same id is his own batch: applied, and never answered with Ann's answer.
        let bobs = try await database.service.updateData([Self.newClient("Bob's")], session: Self.bob, apply: apply)
        #expect(bobs[0].changes[0].status == .resolved)
        #expect(try Self.names(database).filter { $0.hasSuffix("'s") }.sorted() == ["Ann's", "Bob's"])

        // The same id with other changes is a client's mistake: refused, nothing applied.
        await #expect(throws: RelataError.self) {
            try await database.service.updateData([Self.newClient("Changed")], session: Self.ann, apply: apply)
        }
        do {
            _ = try await database.service.updateData([Self.newClient("Changed")], session: Self.ann, apply: apply)
        } catch let error as RelataError {
            #expect(error.code == .applyIdReused)
            #expect(error.message.contains(apply.id))
        }
        #expect(try !Self.names(database).contains("Changed"))
    }

    @Test(arguments: StorageBackend.allCases)
    func anIdOlderThanTheServerKeepsIdsIsRefusedNotAppliedBlindly(backend: StorageBackend) async throws {
        let database = try DataServiceTests.Database(backend: backend)
        let monthAgo = Int64(Date().timeIntervalSince1970) - 31 * 86_400
        do {
            _ = try await database.service.updateData([Self.newClient("Old")], session: Self.ann, apply: ApplyId(id: "old-batch", madeAt: monthAgo))
            Issue.record("an expired id was applied")
        } catch let error as RelataError {
            #expect(error.code == .applyIdExpired)
            #expect(error.message.contains("30 days"), "\(error.message)")
        }
        #expect(try !Self.names(database).contains("Old"))

        // Within the time, an id made long ago (a briefcase offline for weeks) applies as any other.
        let weeksAgo = Int64(Date().timeIntervalSince1970) - 20 * 86_400
        let answer = try await database.service.updateData([Self.newClient("Offline")], session: Self.ann, apply: ApplyId(id: "offline-batch", madeAt: weeksAgo))
        #expect(answer[0].changes[0].status == .resolved)
    }

    @Test(arguments: StorageBackend.allCases)
    func aRefusedBatchIsAnsweredTheSameWhenRepeated(backend: StorageBackend) async throws {
        let database = try DataServiceTests.Database(backend: backend)
        let (_, _, details) = try DataServiceTests.clientTables()
        try details.rows[0].setValue(0, forKey: "Quantity")   // the server's rule refuses it
        let apply = ApplyId()
        let first = try await database.service.updateData([details.makeDelta()], session: Self.ann, apply: apply)
        #expect(first[0].changes[0].status == .failed)
        let again = try await database.service.updateData([details.makeDelta()], session: Self.ann, apply: apply)
        #expect(again[0].changes[0].failure == first[0].changes[0].failure)
    }

    @Test(arguments: StorageBackend.allCases)
    func theSameBatchSentManyTimesAtOnceIsStoredOnce(backend: StorageBackend) async throws {
        let database = try DataServiceTests.Database(backend: backend, readers: 8)
        let apply = ApplyId()
        let service = database.service
        let answers = try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<8 {
                group.addTask { Self.verdicts(try await service.updateData([Self.newClient("Twins")], session: Self.ann, apply: apply)) }
            }
            return try await group.reduce(into: [[String]]()) { $0.append($1) }
        }
        #expect(Set(answers).count == 1, "every attempt got the one answer")
        #expect(try Self.names(database).filter { $0 == "Twins" }.count == 1)
    }

    @Test(arguments: StorageBackend.allCases)
    func aRecordIsTheFingerprintAndTheAnswerInBinaryAndAnswersItsRetryExactly(backend: StorageBackend) async throws {
        let database = try DataServiceTests.Database(backend: backend)
        let (_, _, details) = try DataServiceTests.clientTables()
        try details.rows[0].setValue(0, forKey: "Quantity")   // refused by the server's rule: an answer with a failure
        try details.rows[1].setValue(7, forKey: "Quantity")
        let apply = ApplyId()
        let delta = try details.makeDelta()
        let first = try await database.service.updateData([delta], session: Self.ann, apply: apply)
        let record = try database.service.storage.write { connection in
            try connection.rows("SELECT fingerprint, answer FROM relata_applies WHERE apply_id = '\(apply.id)'", [],
                                reading: [FieldDefinition("fingerprint", .string), FieldDefinition("answer", .string)])
        }
        #expect(record.count == 1)
        #expect(record.first?[0].stringValue == (try DeltaFingerprint.of([delta])))
        let text = try #require(record.first?[1].stringValue)
        #expect(text.hasPrefix(ApplyLog.compactAnswer))
        // What the batch carries is not recorded twice: the record is smaller than the whole answer.
        #expect(text.count < ApplyLog.binaryAnswer.count + (try DeltaBinary.encode(first)).base64EncodedString().count * 2 / 3)
        // The retry arrives in the other encoding, its members in another order: the same batch, the same answer.
        let again = try await database.service.updateData(try DeltaBinary.decode(DeltaBinary.encode([delta])), session: Self.ann, apply: apply)
        #expect(again == first)
    }

    @Test(arguments: StorageBackend.allCases)
    func aRecordAnEarlierServerWroteStillAnswersItsRetry(backend: StorageBackend) async throws {
        let database = try DataServiceTests.Database(backend: backend)
        let batch = [Self.newClient("Before The Upgrade")]
        var answer = batch
        answer[0].changes[0].status = .resolved
        answer[0].changes[0].refreshedValues = ["LogId": .integer(4242)]
        // What a server before `DeltaFingerprint` recorded: the text fingerprint, the answer's JSON.
        try database.service.storage.write { connection in
            try connection.begin()
            _ = try connection.committing {
                try $0.execute("INSERT INTO relata_applies (user_name, apply_id, fingerprint, recorded_at, answer) VALUES ('ann', 'old-form', '\(ApplyLog.textFingerprint(of: batch))', \(Int64(Date().timeIntervalSince1970)), \(database.service.storage.dialect.placeholder(1)))",
                               [.string(String(decoding: try DeltaJSON.encode(answer), as: UTF8.self))])
            }
        }
        let apply = try ApplyId(id: "old-form", madeAt: Int64(Date().timeIntervalSince1970))
        let retried = try await database.service.updateData(batch, session: Self.ann, apply: apply)
        #expect(retried == answer, "the recorded answer, real key included")
        #expect(try !Self.names(database).contains("Before The Upgrade"), "applied once: before the upgrade")
        await #expect(throws: RelataError.self, "other changes under the old record's id") {
            try await database.service.updateData([Self.newClient("Something Else")], session: Self.ann, apply: apply)
        }
    }

    @Test func idsAreCheckedWhereTheyAreRead() throws {
        #expect(throws: RelataError.self) { try ApplyId(id: "", madeAt: 0) }
        #expect(throws: RelataError.self) { try ApplyId(id: String(repeating: "a", count: 129), madeAt: 0) }
        #expect(throws: RelataError.self) { try ApplyId(id: "two words", madeAt: 0) }
        #expect(throws: RelataError.self) { try ApplyId(id: "ok", madeAt: -1) }
        let body = #"{"apply":{"id":"x y","madeAt":1},"deltas":[]}"#
        do {
            _ = try DeltaJSON.decodeRequest(Array(body.utf8))
            Issue.record("a bad id was read")
        } catch let error as RelataError {
            #expect(error.code == .invalidDelta)
            #expect(error.description.contains("apply"), "\(error)")
        }
        let apply = ApplyId()
        let read = try DeltaJSON.decodeRequest(DeltaJSON.encode([Self.newClient("Round")], apply: apply))
        #expect(read.apply == apply)
        #expect(read.deltas.count == 1)
    }
}
