import Foundation
import Relata
import Testing
@testable import RelataScript

/// What `lda` sees during a row event: the table as it was before the change being posted.
/// A row being inserted is not found; a row being updated is found by its values before the
/// change (and, being the same row as `row`, reads with its new ones); a row added earlier and
/// still pending is in the table like any other — for its first insert and its later edits alike.
@Suite struct DataAccessVisibilityTests {
    static let rules = """
        function seen(event, row) {
            const byNew = lda.selectWhere('OrderDetails', 'DetailId = :id AND Quantity = :q', { id: row.DetailId, q: row.Quantity });
            const byKey = lda.select('OrderDetails', row.DetailId);
            log(event + ' found by new values: ' + byNew.length + ', by key: ' + (byKey === null ? 'no' : 'yes, reads ' + byKey.Quantity));
        }
        function beforeInsert(row) { seen('insert', row); }
        function beforeUpdate(row, old) { seen('update', row); }
        function beforeDelete(row) { seen('delete', row); }
        """

    @Test func ldaSeesTheTableAsItWasBeforeTheChange() throws {
        let recorder = LogRecorder()
        let adapter = try makeAdapter(details: Self.rules, logger: recorder.logger)
        let details = try #require(adapter.table(named: "OrderDetails"))
        let row = try details.addNewRow(values: ["OrderId": 10, "Product": "Probe", "Quantity": 1])
        try row.setValue(2, forKey: "Quantity")                  // a later edit of the still-pending row
        try details.rows[0].setValue(7, forKey: "Quantity")      // an update of a row from the data source
        try details.removeRow(details.rows[1])
        #expect(recorder.messages == [
            "insert found by new values: 0, by key: no",
            "insert found by new values: 0, by key: yes, reads 2",
            "update found by new values: 0, by key: yes, reads 7",
            "delete found by new values: 1, by key: yes, reads 1",
        ], "\(recorder.messages)")
    }
}
