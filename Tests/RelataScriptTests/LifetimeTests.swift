import Foundation
import Relata
import Testing
@testable import RelataScript

/// Adapters, hosts and scripts must not keep each other alive, and tables may outlive their adapter.
@Suite struct LifetimeTests {
    @Test func anAdapterWithScriptsIsReleased() throws {
        weak var released: LocalDataAdapter?
        var table: DataTable?
        do {
            let adapter = try makeAdapter(orders: """
                function beforePost(row) { if (lda.select('Clients', row.ClientId) === null) fail('no such client'); }
                """)
            try adapter.addCalculatedField(name: "Label", type: .string, table: "Orders",
                                           function: "function (row) { return 'order ' + row.OrderId }")
            try adapter.table(named: "Orders")!.rows[0].setValue("paid", forKey: "Status")
            table = adapter.table(named: "Orders")
            released = adapter
        }
        #expect(released == nil, "nothing keeps the adapter alive")
        let orders = try #require(table)
        #expect(orders.rules == nil, "the table no longer consults the adapter's rules")
        try orders.rows[1].setValue("closed", forKey: "Status")
        #expect(orders.rows[0]["Label"] == "order 10", "calculated fields keep working")
    }

    @Test func aTableAndTheRuntimeItsCalculatedFieldsUseAreReleasedTogether() throws {
        weak var runtime: RuleRuntime?
        weak var released: DataTable?
        do {
            let adapter = try makeAdapter()
            try adapter.addCalculatedField(name: "Label", type: .string, table: "Orders",
                                           function: "function (row) { return 'order ' + row.OrderId }")
            runtime = adapter.runtime
            released = adapter.table(named: "Orders")
        }
        #expect(runtime == nil, "the runtime's data (through lda) does not hold the tables in a cycle")
        #expect(released == nil)
    }
}
