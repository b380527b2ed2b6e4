import Foundation
import Relata
import RelataScript
@testable import RelataServer
import RelataServerTestSupport
import RelataTestSupport
import Testing

/// ExecuteCommand: functions of the schema script, run as the caller, their changes applied with the rules.
@Suite(.timeLimit(.minutes(10))) struct CommandTests {
    static func service(enabled: Bool = true, roles: [String] = [], backend: StorageBackend = .sqlite) throws -> DataServiceTests.Database {
        let base = try DataServiceTests.schema()
        let script = RuleScript("""
            function closeOrder(parameters) {
                const order = lda.select('Orders', parameters.orderId);
                if (order === null) fail('no order ' + parameters.orderId);
                lda.update('Orders', order, { Status: 'closed' });
                lda.insert('OrderDetails', { OrderId: order.OrderId, Product: 'Closing fee', Quantity: parameters.quantity, UnitPrice: 1 });
                return 'closed by ' + session.User;
            }
            """, fileName: "schema.js")
        let schema = try SchemaDefinition(name: base.name, tables: base.tables, script: script, updateOrder: base.updateOrder,
                                          commands: [CommandDefinition(name: "CloseOrder", function: "closeOrder", enabled: enabled, roles: roles)])
        return try DataServiceTests.Database(schema: schema, backend: backend)
    }

    @Test(arguments: StorageBackend.allCases)
    func aCommandRunsAsTheCallerAndItsChangesGoThroughTheRules(backend: StorageBackend) async throws {
        let database = try Self.service(backend: backend)
        let (result, deltas) = try await database.service.executeCommand("closeorder", parameters: ["orderId": 10, "quantity": 1],
                                                                         session: Session(values: ["User": "ann"]))
        #expect(result == "closed by ann")
        #expect(deltas.flatMap(\.changes).allSatisfy { $0.status == .resolved })
        #expect(try database.service.storedRows(of: "Orders")[0]["Status"] == "closed")
        #expect(try database.service.storedRows(of: "OrderDetails").last?["Product"] == "Closing fee")
        #expect(try database.service.storedRows(of: "AuditLog").count == 1, "the inserted line's delta events ran")

        // The row rules hold inside a command too: a zero quantity is refused, and nothing of the command lands.
        await #expect(throws: ScriptError.self) {
            _ = try await database.service.executeCommand("CloseOrder", parameters: ["orderId": 11, "quantity": 0], session: Session())
        }
        #expect(try database.service.storedRows(of: "Orders")[1]["Status"] == "open")
        await #expect(throws: ScriptError.self) {
            _ = try await database.service.executeCommand("CloseOrder", parameters: ["orderId": 99, "quantity": 1], session: Session())
        }
    }

    @Test func commandsAreRefusedUnlessDeclaredEnabledAndAllowed() async throws {
        func code(_ database: DataServiceTests.Database, _ name: String, _ session: Session = Session()) async -> RelataError.Code? {
            do {
                _ = try await database.service.executeCommand(name, parameters: ["orderId": 10, "quantity": 1], session: session)
                return nil
            } catch let error as RelataError {
                return error.code
            } catch {
                return nil
            }
        }
        #expect(await code(try Self.service(), "DropTables") == .unknownCommand)
        #expect(await code(try Self.service(enabled: false), "CloseOrder") == .permissionDenied)
        let managersOnly = try Self.service(roles: ["Manager"])
        #expect(await code(managersOnly, "CloseOrder", Session(roles: ["Clerk"])) == .permissionDenied)
        #expect(await code(managersOnly, "CloseOrder", Session(roles: ["Manager"])) == nil)
    }

    @Test func aCommandWhoseFunctionIsMissingStopsTheServerFromStarting() throws {
        let base = try DataServiceTests.schema()
        let schema = try SchemaDefinition(name: base.name, tables: base.tables, script: RuleScript("function other() {}", fileName: "schema.js"),
                                          updateOrder: base.updateOrder, commands: [CommandDefinition(name: "CloseOrder", function: "closeOrder", enabled: true)])
        #expect(throws: ScriptError.self) { try DataServiceTests.Database(schema: schema) }
    }

    @Test(arguments: StorageBackend.allCases)
    func overTheWire(backend: StorageBackend) async throws {
        let database = try Self.service(backend: backend)
        let ann = ServerUser(name: "ann", passwordHash: ServerUser.hash(password: "pw", cost: 4))
        let services = try ServerServices(dataServices: [database.service], login: LoginService(users: [ann], sessions: backend.makeSessions(in: database.database)))
        try await withLiveServer(services) { client in
            let (_, login) = try await HTTPProtocolTests.post(client, "/v2/LoginService/Login", ProtocolMessages.LoginRequest(loginString: "User=ann;Password=pw"))
            let token = try JSONDecoder().decode(ProtocolMessages.LoginAnswer.self, from: login).token
            let (status, data) = try await HTTPProtocolTests.post(client, "/v2/DataService/ExecuteCommand",
                                                                  ProtocolMessages.CommandRequest(command: "CloseOrder", parameters: ["orderId": 11, "quantity": 2]), token: token)
            #expect(status == 200)
            let answer = try JSONDecoder().decode(ProtocolMessages.CommandAnswer.self, from: data)
            #expect(answer.result == "closed by ann")
            let (refused, refusal) = try await HTTPProtocolTests.post(client, "/v2/DataService/ExecuteCommand",
                                                                      ProtocolMessages.CommandRequest(command: "CloseOrder", parameters: ["orderId": 5, "quantity": 1]), token: token)
            #expect(refused == 403)
            #expect(try HTTPProtocolTests.error(refusal).message == "no order 5")
        }
    }
}
