import Foundation
import Relata
@testable import RelataServer
import RelataServerTestSupport
import Testing

/// Applies that arrive together may share one durable commit (SQLite's grouped writes): each
/// is still stored once, refused alone, and readable by anyone the moment its answer comes.
@Suite(.timeLimit(.minutes(2))) struct GroupedApplyTests {
    @Test(arguments: StorageBackend.allCases)
    func appliesAtOnceAreEachStoredOnceAndReadableWhenAnswered(backend: StorageBackend) async throws {
        let database = try DataServiceTests.Database(backend: backend, readers: 8)
        let service = database.service
        let refused = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<40 {
                group.addTask {
                    // Every fifth apply is an order for a client that does not exist, which the
                    // rules refuse; the applies that share its commit must not notice.
                    if index % 5 == 0 {
                        let order = Delta(tableName: "Orders", keyFields: ["OrderId"], loggedFields: ["OrderId", "ClientId", "Status"], changes: [
                            DeltaChange(changeId: 1, type: .insert, newValues: ["OrderId": .integer(Int64(1000 + index)), "ClientId": .integer(999), "Status": .string("open")]),
                        ])
                        let answer = try await service.updateData([order], session: ApplyIdTests.ann, apply: ApplyId())
                        return answer[0].changes[0].status == .failed ? 1 : 0
                    }
                    let name = "Client \(index)"
                    let answer = try await service.updateData([ApplyIdTests.newClient(name)], session: ApplyIdTests.ann, apply: ApplyId())
                    #expect(answer[0].changes[0].status == .resolved, "\(answer[0].changes[0].message ?? "")")
                    // Answered: another connection sees it now, not after a later commit.
                    #expect(try service.storedRows(of: "AuditLog").contains { $0["Message"]?.stringValue == name }, "\(name) is readable once answered")
                    return 0
                }
            }
            return try await group.reduce(0, +)
        }
        let names = try ApplyIdTests.names(database)
        for index in 0..<40 where index % 5 != 0 {
            #expect(names.filter { $0 == "Client \(index)" }.count == 1, "Client \(index) stored once")
        }
        #expect(refused == 8, "each order for a missing client refused")
        #expect(try database.service.storedRows(of: "Orders").count == 2, "none of them stored")
    }
}
