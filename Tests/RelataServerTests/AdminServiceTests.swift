import Foundation
import Relata
@testable import RelataServer
import RelataServerTestSupport
import RelataTestSupport
import Testing

/// `AdminService/Overview` over a real socket: only for the configured admin roles, only the
/// caller's own domain, never a session's token, and the refusals the domain's users met.
@Suite(.timeLimit(.minutes(5))) struct AdminServiceTests {
    static let boss = ServerUser(name: "boss", passwordHash: ServerUser.hash(password: "secret", cost: 4), roles: ["Manager"])

    struct Overview: Decodable {
        struct Server: Decodable { let `protocol`: String; let uptimeSeconds: Int }
        struct Health: Decodable { let status: String; let checks: [Check] }
        struct Check: Decodable { let name: String; let ready: Bool }
        struct Listing: Decodable { let user: String; let domain: String; let roles: [String] }
        struct Refusal: Decodable {
            let user: String?, domain: String?, service: String?, requestId: String?, kind: String, message: String
            let table: String?, row: String?, event: String?, file: String?, line: Int?, column: Int?
        }
        let server: Server
        let domain: String
        let health: Health
        let sessions: [Listing]
        let refusals: [Refusal]
    }

    static func login(_ client: LiveClient, _ loginString: String) async throws -> ProtocolMessages.LoginAnswer {
        let (status, data) = try await HTTPProtocolTests.post(client, "/v2/LoginService/Login", ProtocolMessages.LoginRequest(loginString: loginString))
        #expect(status == 200, "\(String(decoding: data, as: UTF8.self))")
        return try JSONDecoder().decode(ProtocolMessages.LoginAnswer.self, from: data)
    }

    /// The overview once `done` holds of it (a request's refusals are kept once its answer is
    /// written, a moment after the client reads it), or the last one after five seconds.
    static func overview(_ client: LiveClient, token: String, until done: (Overview) -> Bool = { _ in true }) async throws -> Overview {
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            let (status, data) = try await HTTPProtocolTests.post(client, "/v2/AdminService/Overview", "{}", token: token)
            try #require(status == 200, "\(String(decoding: data, as: UTF8.self))")
            let overview = try JSONDecoder().decode(Overview.self, from: data)
            if done(overview) || ContinuousClock.now > deadline { return overview }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @Test func anAdminSeesHealthSessionsAndTheRefusalsOfTheDomainsUsers() async throws {
        let server = try HTTPProtocolTests.Server(otherUsers: [Self.boss])
        try await server.test(ServerConfiguration(port: 0, adminRoles: ["Manager"])) { client in
            let ann = try await Self.login(client, "User=ann;Password=secret;Schema=Shop")
            #expect(ann.admin == nil, "Sales is not an admin role")
            let details = try DataServiceTests.clientTables().details
            try details.rows[0].setValue(-5, forKey: "Quantity")
            let (applied, _) = try await HTTPProtocolTests.post(client, "/v2/DataService/UpdateData",
                                                               ProtocolMessages.UpdateDataMessage(deltas: [details.makeDelta()]), token: ann.token)
            #expect(applied == 200)
            let (refused, body) = try await HTTPProtocolTests.post(client, "/v2/AdminService/Overview", "{}", token: ann.token)
            #expect(refused == 403)
            let error = try HTTPProtocolTests.error(body)
            #expect(error.code == "permissionDenied")
            #expect(error.message.contains("console.adminRoles") && error.message.contains("[Manager]") && error.message.contains("[Sales]"))

            let boss = try await Self.login(client, "User=boss;Password=secret")
            #expect(boss.admin == true)
            let overview = try await Self.overview(client, token: boss.token) { $0.refusals.count >= 2 }
            #expect(overview.server.protocol == "v2")
            #expect(overview.domain == "default")
            #expect(overview.health.status == "ready")
            #expect(overview.health.checks.map(\.name) == ["sessions", "default/Shop"])
            #expect(Set(overview.sessions.map(\.user)) == ["ann", "boss"])
            #expect(overview.sessions.first { $0.user == "ann" }?.roles == ["Sales"])

            // Newest first: ann's refused call of AdminService, then the change the rules refused.
            try #require(overview.refusals.count == 2)
            let denied = overview.refusals[0], quantity = overview.refusals[1]
            #expect(denied.kind == "permissionDenied" && denied.user == "ann" && denied.message.contains("console.adminRoles"))
            #expect(quantity.kind == "refusal" && quantity.user == "ann" && quantity.domain == "default")
            #expect(quantity.service == "DataService.Shop" && quantity.requestId?.isEmpty == false)
            #expect(quantity.message == "Quantity must be positive" && quantity.table == "OrderDetails" && quantity.row == "row (DetailId=100)")
            #expect(quantity.event == "beforePost" && quantity.file == "OrderDetails.js" && quantity.line == 2 && quantity.column == 28)

            // Sessions are shown, never their tokens.
            let (_, raw) = try await HTTPProtocolTests.post(client, "/v2/AdminService/Overview", "{}", token: boss.token)
            let text = String(decoding: raw, as: UTF8.self)
            #expect(!text.contains(ann.token) && !text.contains(boss.token))
        }
    }

    @Test func withoutAdminRolesNobodyIsAnAdmin() async throws {
        let server = try HTTPProtocolTests.Server(otherUsers: [Self.boss])
        try await server.test(ServerConfiguration(port: 0)) { client in
            let boss = try await Self.login(client, "User=boss;Password=secret")
            #expect(boss.admin == nil)
            let (status, body) = try await HTTPProtocolTests.post(client, "/v2/AdminService/Overview", "{}", token: boss.token)
            #expect(status == 403)
            #expect(try HTTPProtocolTests.error(body).message.contains("this server names none"))

            let (stranger, strangerBody) = try await HTTPProtocolTests.post(client, "/v2/AdminService/Overview", "{}")
            #expect(stranger == 401 && (try? HTTPProtocolTests.error(strangerBody).code) == "sessionNotFound")
            let (unknown, unknownBody) = try await HTTPProtocolTests.post(client, "/v2/AdminService/Sessions", "{}", token: boss.token)
            #expect(unknown == 404 && (try? HTTPProtocolTests.error(unknownBody).message.contains("methods: Overview")) == true)
        }
    }

    /// An admin of one domain sees neither the sessions nor the refusals of another.
    @Test func anAdminSeesOnlyHisOwnDomain() async throws {
        let north = try DataServiceTests.Database(), south = try DataServiceTests.Database()
        let sessions = try SessionStore(path: north.folder.appendingPathComponent("sessions.sqlite").path)
        let carol = ServerUser(name: "carol", passwordHash: ServerUser.hash(password: "secret", cost: 4), roles: ["Sales"])
        let services = try ServerServices(domains: [
            ServerDomain(name: "north", login: LoginService(users: [Self.boss], sessions: sessions), dataServices: [north.service]),
            ServerDomain(name: "south", login: LoginService(users: [carol], sessions: sessions), dataServices: [south.service]),
        ], sessions: sessions)
        try await withLiveServer(services, configuration: ServerConfiguration(port: 0, adminRoles: ["Manager"])) { client in
            let carol = try await Self.login(client, "User=carol;Password=secret;Domain=south")
            let details = try DataServiceTests.clientTables().details
            try details.rows[0].setValue(0, forKey: "Quantity")
            _ = try await HTTPProtocolTests.post(client, "/v2/DataService/UpdateData",
                                                 ProtocolMessages.UpdateDataMessage(deltas: [details.makeDelta()]), token: carol.token)
            let boss = try await Self.login(client, "User=boss;Password=secret;Domain=north")
            // Give carol's refusal time to be kept: the overview must still not show it.
            try await Task.sleep(for: .milliseconds(200))
            let overview = try await Self.overview(client, token: boss.token)
            #expect(overview.domain == "north")
            #expect(overview.sessions.map(\.user) == ["boss"])
            #expect(overview.refusals.isEmpty)
            #expect(overview.health.checks.map(\.name) == ["sessions", "north/Shop", "south/Shop"], "health is the server's")
        }
    }

    /// One request refused whole cannot push every other user's refusals out: it leaves at most
    /// twenty, and the store keeps the newest it was given.
    @Test func refusalsAreBoundedPerRequestAndInAll() {
        let record = RequestRecord()
        let failure = ChangeFailure(.refusal, "no")
        let change = DeltaChange(changeId: 1, type: .insert, newValues: ["Id": 1], status: .failed, failure: failure)
        record.noteChanges(of: [Delta(tableName: "T", keyFields: ["Id"], loggedFields: ["Id"], changes: Array(repeating: change, count: 500))])
        #expect(record.facts.refusals.count == RequestRecord.refusalsKept)
        let recent = RecentRefusals(capacity: 50)
        for batch in 0..<10 {
            recent.add((0..<20).map { index in
                RecentRefusals.Refusal(at: Date(), domain: "d", kind: "refusal", message: "\(batch)-\(index)")
            })
        }
        let kept = recent.list(domain: "d")
        #expect(kept.count == 50)
        #expect(kept.first?.message == "9-19" && kept.last?.message == "7-10")
        #expect(recent.list(domain: "other").isEmpty)
    }
}
