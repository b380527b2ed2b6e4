import Foundation
import Relata
@testable import RelataServer
import RelataServerTestSupport
import Testing

/// Sessions that can be ended: an absolute lifetime however much a session is used, and an
/// operator's ending of a user's sessions (or everyone's), seen by every instance.
@Suite(.timeLimit(.minutes(10))) struct SessionEndingTests {
    static func stores(_ backend: StorageBackend, lifetime: Duration, maxLifetime: Duration) throws -> (SessionStore, SessionStore, cleanup: () -> Void) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("relata-sessions-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let (databases, cleanup) = try backend.makeSharedDatabase(connections: 2, in: folder)
        return (try SessionStore(database: databases[0], lifetime: lifetime, maxLifetime: maxLifetime),
                try SessionStore(database: databases[1], lifetime: lifetime, maxLifetime: maxLifetime),
                { cleanup(); try? FileManager.default.removeItem(at: folder) })
    }

    @Test(arguments: StorageBackend.allCases)
    func aSessionUsedWithoutPauseStillEndsAtItsMaximumLifetime(backend: StorageBackend) throws {
        let (store, _, cleanup) = try Self.stores(backend, lifetime: .seconds(100), maxLifetime: .seconds(300))
        defer { cleanup() }
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let token = try store.start(Session(values: ["User": "ann", "Domain": "Shop"], roles: ["Sales"]), now: now)
        for step in stride(from: 90.0, through: 270, by: 90) {
            #expect(try store.session(for: token, now: now + step) != nil, "used \(step) s in")
        }
        #expect(try store.session(for: token, now: now + 299) != nil)
        #expect(try store.session(for: token, now: now + 301) == nil, "used 31 s before, but 300 s after its login")
    }

    @Test(arguments: StorageBackend.allCases)
    func anOperatorEndsAUsersSessionsOnEveryInstance(backend: StorageBackend) async throws {
        let (first, second, cleanup) = try Self.stores(backend, lifetime: .seconds(600), maxLifetime: .seconds(3600))
        defer { cleanup() }
        let now = Date()
        let ann = try first.start(Session(values: ["User": "ann", "Domain": "Shop"], roles: ["Sales"]), now: now)
        let annLab = try first.start(Session(values: ["User": "ann", "Domain": "Lab"], roles: ["Tech"]), now: now)
        let bob = try first.start(Session(values: ["User": "bob", "Domain": "Shop"], roles: ["Clerk"]), now: now)
        let listed = try second.list(now: now)
        #expect(listed.map(\.user).sorted() == ["ann", "ann", "bob"])
        #expect(listed.first { $0.user == "bob" }?.roles == ["Clerk"])
        #expect(listed.allSatisfy { $0.ends.timeIntervalSince($0.started) > 3599 })

        // Each instance serves the sessions it read lately from memory: another instance's ending
        // of them is seen within a second (SessionCache).
        #expect(try first.session(for: annLab, now: now) != nil && first.session(for: bob, now: now) != nil)
        #expect(try second.end(user: "ann", domain: "Shop") == 1)
        #expect(await eventually(within: .seconds(5)) { (try? first.session(for: ann, now: now)) == .some(nil) })
        #expect(try first.session(for: annLab, now: now) != nil, "her session in another domain stays")
        #expect(try second.end(user: "ann") == 1)
        #expect(await eventually(within: .seconds(5)) { (try? first.session(for: annLab, now: now)) == .some(nil) })
        #expect(try second.endAll() == 1)
        #expect(await eventually(within: .seconds(5)) { (try? first.session(for: bob, now: now)) == .some(nil) })
    }

    /// A session table of an older Relata (without the columns saying whose each session is) is
    /// replaced at the start: its sessions end, and their users log in again.
    @Test func anOlderSessionTableIsReplaced() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("relata-sessions-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = try SQLiteDatabase(path: folder.appendingPathComponent("s.sqlite").path, synchronous: false)
        _ = try database.write { connection in
            try connection.execute("CREATE TABLE relata_sessions (token_digest TEXT PRIMARY KEY NOT NULL, session TEXT NOT NULL, expires REAL NOT NULL)", [])
            try connection.execute("INSERT INTO relata_sessions VALUES ('x', '{}', 1e12)", [])
        }
        let store = try SessionStore(database: database)
        #expect(try store.list().isEmpty)
        let token = try store.start(Session(values: ["User": "ann"]))
        #expect(try store.session(for: token) != nil)
    }

    /// A login table's user whose roles change, or who is removed, loses his sessions at the next
    /// check (the server runs it every few seconds); the others keep theirs.
    @Test(arguments: StorageBackend.allCases)
    func aChangedOrRemovedAccountLosesItsSessions(backend: StorageBackend) async throws {
        let setup = try await LoginTableSecretsTests.Setup(backend)
        defer { withExtendedLifetime(setup) {} }   // its database lives as long as the test
        let service = setup.database.service, services = setup.services
        let admin = Session(values: ["User": "root"], roles: ["Admin"])
        try await withLiveServer(services) { client in
            let ann = try await LoginTableSecretsTests.token(client, "ann"), bob = try await LoginTableSecretsTests.token(client, "bob")
            let root = try await LoginTableSecretsTests.token(client, "root")
            let unchanged = try await services.endSessionsOfChangedAccounts()
            #expect(unchanged == 0, "nothing changed yet")

            var raise = DeltaChange(changeId: 1, type: .update, oldValues: ["UserName": "ann"], newValues: ["UserName": "ann", "Roles": "Sales,Admin"])
            raise.edits = [RowEdit(sequence: 1, kind: .update, values: ["Roles": "Sales,Admin"])]
            let remove = DeltaChange(changeId: 2, type: .delete, oldValues: ["UserName": "bob"])
            let fields = LoginTableSecretsTests.userFields.map(\.name)
            let done = try await service.updateData([Delta(tableName: "Users", keyFields: ["UserName"], loggedFields: fields, changes: [raise, remove])], session: admin)
            #expect(done[0].changes.allSatisfy { $0.status == .resolved })

            let ended = try await services.endSessionsOfChangedAccounts()
            #expect(ended == 2)
            for (token, open) in [(ann, false), (bob, false), (root, true)] {
                let (status, _) = try await HTTPProtocolTests.post(client, "/v2/DataService/GetSchema", "{}", token: token)
                #expect(status == (open ? 200 : 401))
            }
        }
    }
}
