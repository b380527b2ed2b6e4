import Foundation
import Relata
@testable import RelataServer
import RelataServerTestSupport
import RelataTestSupport
import Testing

/// Sessions in the database: shared by every server instance that uses it.
@Suite(.timeLimit(.minutes(10))) struct SessionStoreTests {
    @Test(arguments: StorageBackend.allCases)
    func aSessionStartedOnOneInstanceIsServedAndEndedOnAnother(backend: StorageBackend) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("relata-sessions-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (databases, cleanup) = try backend.makeSharedDatabase(connections: 2, in: folder)
        defer { cleanup() }
        let first = try SessionStore(database: databases[0], lifetime: .seconds(600))
        let second = try SessionStore(database: databases[1], lifetime: .seconds(600))

        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let session = Session(values: ["User": "ann", "UserId": 7], roles: ["Sales"])
        let token = try first.start(session, now: now)
        #expect(try second.session(for: token, now: now) == session, "logged in through one instance, served by another")
        #expect(try second.session(for: String(repeating: "0", count: 64), now: now) == nil)
        #expect(try second.session(for: "not a token", now: now) == nil)

        // Used, a session lasts; unused past its lifetime, it is gone.
        #expect(try first.session(for: token, now: now + 500) == session)
        #expect(try second.session(for: token, now: now + 1000) == session, "extended by the use 500 s in")
        #expect(try second.session(for: token, now: now + 1700) == nil)

        let other = try second.start(session, now: now)
        try second.end(other)
        #expect(try first.session(for: other, now: now) == nil, "a logout is seen by every instance")
        let third = try first.start(session, now: now)
        try second.endAll()
        #expect(try first.session(for: third, now: now) == nil)
    }

    @Test(arguments: StorageBackend.allCases)
    func failedLoginsCountOnEveryInstance(backend: StorageBackend) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("relata-throttle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (databases, cleanup) = try backend.makeSharedDatabase(connections: 2, in: folder)
        defer { cleanup() }
        let users = [ServerUser(name: "ann", passwordHash: ServerUser.hash(password: "right", cost: 4))]
        let instances = try databases.map { LoginService(providers: [StaticUsers(users)], sessions: try SessionStore(database: $0), failedLoginLimit: 3) }
        func attempt(_ instance: Int, _ password: String) throws -> Session? {
            try instances[instance].authenticate(try LoginString("User=ann;Password=\(password)"))
        }
        #expect(try attempt(0, "wrong") == nil)
        #expect(try attempt(1, "wrong") == nil)
        #expect(try attempt(0, "right") != nil, "a success forgets the failures")
        for instance in [0, 1, 0] { #expect(try attempt(instance, "wrong") == nil) }
        #expect(throws: LoginService.LockedOut.self, "three failures through two instances lock the name on both") { try attempt(1, "right") }
        #expect(throws: LoginService.LockedOut.self) { try attempt(0, "right") }
    }

    /// What strangers make the server store is bounded: a failed login is a fixed-size digest
    /// (a 1 MiB user name stores 64 characters), the records are capped, and a lockout is per
    /// domain and name — names that differ only in their Unicode encoding are one name.
    @Test(arguments: StorageBackend.allCases)
    func failedLoginsAreDigestsCappedAndCountedPerDomain(backend: StorageBackend) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("relata-throttle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (database, cleanup) = try backend.makeDatabase(in: folder)
        defer { cleanup() }
        let sessions = try SessionStore(database: database)
        let users = [ServerUser(name: "José", passwordHash: ServerUser.hash(password: "right", cost: 4))]
        let service = LoginService(providers: [StaticUsers(users)], sessions: sessions, failedLoginLimit: 3, maxFailureRecords: 5)
        func stored() throws -> [[Value]] {
            try database.read { try $0.rows("SELECT user_name FROM relata_login_failures", [], reading: [FieldDefinition("name", .string)]) }
        }

        let huge = String(repeating: "x", count: 1 << 20)
        #expect(try service.authenticate(LoginString("User=\(huge);Password=guess"), in: "Shop") == nil)
        #expect(try stored().map { $0[0].stringValue?.count } == [64], "a digest, not the name")

        for attempt in 0..<10 { _ = try service.authenticate(LoginString("User=stranger\(attempt);Password=guess"), in: "Shop") }
        #expect(try stored().count == 5, "capped")

        // Composed "é" and "e" + combining accent: one name to the lockout.
        for name in ["Jos\u{E9}", "Jose\u{301}", "Jos\u{E9}"] {
            #expect(try service.authenticate(LoginString("User=\(name);Password=wrong"), in: "Shop") == nil)
        }
        #expect(throws: LoginService.LockedOut.self) { try service.authenticate(LoginString("User=José;Password=right"), in: "Shop") }
        #expect(try service.authenticate(LoginString("User=José;Password=right"), in: "Lab") != nil, "another domain is not locked")
        #expect(throws: LoginService.LockedOut.self, "domain names are case-insensitive") {
            try service.authenticate(LoginString("User=José;Password=right"), in: "SHOP")
        }
    }
}

extension SessionStoreTests {
    /// A session read lately is served from memory: no database read per request. A session
    /// ended on another instance is refused here within the cache's time; one ended here, at once.
    @Test(arguments: StorageBackend.allCases)
    func aCachedSessionEndedOnAnotherInstanceIsRefusedWithinTheCachesTime(backend: StorageBackend) async throws {
        let folder = try TemporaryFolder()
        let (databases, cleanup) = try backend.makeSharedDatabase(connections: 2, in: folder.url)
        defer { cleanup(); withExtendedLifetime(folder) {} }
        let here = try SessionStore(database: databases[0], cacheFor: .seconds(1))
        let there = try SessionStore(database: databases[1], cacheFor: .seconds(1))
        let session = Session(values: ["User": "ann"], roles: ["Sales"])

        // The row removed behind the stores' backs (no counter moved): the cached session is still served.
        let token = try here.start(session)
        #expect(here.cachedSession(for: token) == nil, "not read yet: the caller asks the database")
        #expect(try here.session(for: token) == session)
        #expect(here.cachedSession(for: token) == session, "read lately: answered from memory, without blocking")
        #expect(here.cachedSession(for: String(repeating: "a", count: 64)) == nil)
        try databases[1].inTransaction { try $0.execute("DELETE FROM relata_sessions", []) }
        #expect(try here.session(for: token) == session, "served from memory, not read again")
        try await Task.sleep(for: .milliseconds(1100))   // past a look at the counter
        #expect(try here.session(for: token) == session, "the counter did not move: still served")

        // Ended on another instance: refused here once the cache's time has passed.
        let second = try here.start(session)
        #expect(try here.session(for: second) == session)
        #expect(try there.end(user: "ann") == 1)
        let refused = await eventually(within: .seconds(5)) { (try? here.session(for: second)) == nil }
        #expect(refused, "refused within the cache's time")

        // Ended here: refused at once.
        let third = try here.start(session)
        #expect(try here.session(for: third) == session)
        try here.end(third)
        #expect(here.cachedSession(for: third) == nil)
        #expect(try here.session(for: third) == nil)
        // With no cache, every read goes to the database.
        let uncached = try SessionStore(database: databases[0], cacheFor: .zero)
        let fourth = try uncached.start(session)
        #expect(try uncached.session(for: fourth) == session)
        try databases[1].inTransaction { try $0.execute("DELETE FROM relata_sessions", []) }
        #expect(try uncached.session(for: fourth) == nil)
    }
}
