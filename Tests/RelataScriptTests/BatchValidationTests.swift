import Foundation
import Relata
import Testing
@testable import RelataScript

/// Rules over many rows at once must give the same verdicts as rules row by row.
@Suite struct BatchValidationTests {
    static let rules = """
        function beforePost(row) {
            if (row.Quantity <= 0) fail('line ' + row.DetailId + ': Quantity must be positive');
            if (row.Product === 'lower') row.Product = 'LOWER';
        }
        function beforeInsert(row) {
            if (row.Product === null) fail('a new line needs a product');
        }
        function beforeUpdate(row, old) {
            if (row.UnitPrice < old.UnitPrice / 2)
                fail('price of ' + row.Product + ' fell from ' + old.UnitPrice + ' to ' + row.UnitPrice);
        }
        function beforeDelete(row) {
            if (row.Product === 'Keep') fail('keep this line');
        }
        """

    /// The same edits: made without rules (to validate them in a batch afterwards), or with rules as they happen.
    static func edit(_ details: DataTable) -> [String] {
        var refusals: [String] = []
        func attempt(_ body: () throws -> Void) {
            do { try body() } catch let error as ScriptError { refusals.append("\(error.line ?? 0) \(error.message)") } catch {
                refusals.append("\(error)")
            }
        }
        attempt { try details.rows[0].setValue(-1, forKey: "Quantity") }
        attempt { try details.rows[1].setValue(5, forKey: "UnitPrice") }
        attempt { try details.rows[2].setValue(30, forKey: "UnitPrice") }
        attempt { try details.addNewRow(values: ["OrderId": 10, "Quantity": 3]) }
        attempt { try details.addNewRow(values: ["OrderId": 10, "Product": "lower", "Quantity": 1]) }
        attempt { try details.addNewRow(values: ["OrderId": 11, "Product": "Zero", "Quantity": 0]) }
        attempt {
            let keep = details.rows[2]
            try details.withoutRules { try keep.setValue("Keep", forKey: "Product") }
            try details.removeRow(keep)
        }
        return refusals
    }

    @Test func batchVerdictsMatchRowByRowVerdicts() throws {
        let live = try makeAdapter(details: Self.rules)
        let rowByRow = Self.edit(live.table(named: "OrderDetails")!)

        let batch = try makeAdapter(details: Self.rules)
        let details = batch.table(named: "OrderDetails")!
        _ = details.withoutRules { Self.edit(details) }
        let violations = try batch.validateChanges(for: details)
        let batchVerdicts = violations.map { "\($0.error.line ?? 0) \($0.error.message)" }
        #expect(batchVerdicts.sorted() == rowByRow.sorted())
        #expect(rowByRow.count == 5)
        #expect(violations.allSatisfy { $0.error.kind == .ruleFailed && $0.error.file == "OrderDetails.js" && $0.error.table == "OrderDetails" })
        #expect(violations.first { $0.error.message.contains("fell from") }?.error.event == "beforeUpdate")
        #expect(violations.first { $0.error.message.contains("needs a product") }?.error.event == "beforeInsert")
        #expect(violations.first { $0.error.message.contains("keep") }?.error.event == "beforeDelete")
    }

    @Test func valuesSetByRulesAreApplied() throws {
        let adapter = try makeAdapter(details: Self.rules)
        let details = adapter.table(named: "OrderDetails")!
        let row = try details.withoutRules { try details.addNewRow(values: ["OrderId": 10, "Product": "lower", "Quantity": 2]) }
        #expect(try adapter.validateChanges(for: details).isEmpty)
        #expect(row["Product"] == "LOWER")
    }

    @Test func wrongTypeWritesInABatchAreViolationsWithTheirLocation() throws {
        let adapter = try makeAdapter(details: """
            function beforePost(row) {
                if (row.Quantity === 7)
                    row.Quantity = 'seven';
                if (row.Quantity === 8) row.Product = 12345678901234567890123456789012345;
            }
            """)
        let details = adapter.table(named: "OrderDetails")!
        details.withoutRules {
            try? details.rows[0].setValue(7, forKey: "Quantity")
            try? details.rows[1].setValue(8, forKey: "Quantity")
            try? details.rows[2].setValue(9, forKey: "Quantity")
        }
        let violations = try adapter.validateChanges(for: details)
        #expect(violations.count == 2)
        #expect(violations[0].error.message == "OrderDetails.Quantity, row (DetailId=100): 'seven' (string) is not a valid integer value",
                "the words a row object's write gives")
        #expect(violations[0].error.line == 3)
        #expect(violations[1].error.message.contains("not a valid string value"))
        #expect(details.rows[0]["Quantity"] == 7, "a rejected row keeps what the user typed")
    }

    @Test func aRunawayRowIsStoppedAndTheOthersGetTheirVerdicts() throws {
        let adapter = try makeAdapter(details: "function beforePost(row) { if (row.Quantity === 13) while (true) {} if (row.Quantity < 0) fail('negative'); }")
        let details = adapter.table(named: "OrderDetails")!
        details.withoutRules {
            try? details.rows[0].setValue(-4, forKey: "Quantity")
            try? details.rows[1].setValue(13, forKey: "Quantity")
            try? details.rows[2].setValue(4, forKey: "Quantity")
        }
        let violations = try adapter.validateChanges(for: details)
        #expect(violations.map(\.error.kind) == [.ruleFailed, .timeLimitExceeded])
        #expect(violations.map(\.row.label) == ["row (DetailId=100)", "row (DetailId=101)"])
    }

    @Test func aSlowRowAfterOthersInItsChunkIsNotTakenForARunaway() throws {
        // Each row spends 180 ms of CPU at most (a wall-clock wait never uses more CPU than it waits),
        // under a 300 ms limit per call: the chunk runs out of time, not any row.
        let adapter = try makeAdapter(details: """
            function beforePost(row) { const end = Date.now() + 180; while (Date.now() < end) {} }
            """)
        let details = adapter.table(named: "OrderDetails")!
        details.withoutRules {
            for (index, row) in details.rows.enumerated() { try? row.setValue(.integer(Int64(index + 10)), forKey: "Quantity") }
        }
        let violations = try adapter.validateChanges(for: details)
        #expect(violations.isEmpty, "\(violations.map(\.error))")
    }

    @Test func eventsRunInARowsOwnOrderAcrossTheTableAndSchemaScripts() throws {
        // A row's own edit runs beforePost in every script before beforeUpdate in any:
        // the table's beforeUpdate sees what the schema's beforePost wrote.
        let table = "function beforeUpdate(row, old) { if (row.Product !== 'STAMPED') fail('not stamped: ' + row.Product); }"
        let schema = "function beforePost(row) { if ('Product' in row) row.Product = 'STAMPED'; }"
        let live = try makeAdapter(details: table, schema: schema)
        try live.table(named: "OrderDetails")!.rows[0].setValue(7, forKey: "Quantity")
        #expect(live.table(named: "OrderDetails")!.rows[0]["Product"] == "STAMPED")

        let batch = try makeAdapter(details: table, schema: schema)
        let details = batch.table(named: "OrderDetails")!
        details.withoutRules { try? details.rows[0].setValue(7, forKey: "Quantity") }
        #expect(try batch.validateChanges(for: details).map(\.error.message) == [])
        #expect(details.rows[0]["Product"] == "STAMPED")
    }

    @Test func stringAndLookupFieldsWorkInABatch() throws {
        let adapter = try makeAdapter(details: """
            function beforeUpdate(row, old) {
                if (row.OrderStatus === 'closed') fail(row.Product + ' belongs to a closed order');
                if (old.Product !== row.Product) row.Product = row.Product.trim();
            }
            """)
        let details = adapter.table(named: "OrderDetails")!
        try details.addLookupField(name: "OrderStatus", sourceField: "OrderId", lookupTable: adapter.table(named: "Orders")!,
                                   lookupKeyField: "OrderId", lookupResultField: "Status")
        try adapter.table(named: "Orders")!.rows[1].setValue("closed", forKey: "Status")
        details.withoutRules {
            try? details.rows[0].setValue("  Sprocket ", forKey: "Product")
            try? details.rows[2].setValue(1, forKey: "Quantity")
        }
        let violations = try adapter.validateChanges(for: details)
        #expect(violations.map(\.error.message) == ["Widget belongs to a closed order"])
        #expect(details.rows[0]["Product"] == "Sprocket")
    }

    @Test func batchCursorsCanBeHandedToLda() throws {
        let adapter = try makeAdapter(details: """
            function beforeUpdate(row, old) {
                if (row.Quantity === 9) lda.update('Orders', row.OrderId, { Status: 'changed' });
                if (row.Quantity === 8) lda.remove('OrderDetails', row);
            }
            """)
        let details = adapter.table(named: "OrderDetails")!
        details.withoutRules {
            try? details.rows[0].setValue(9, forKey: "Quantity")
            try? details.rows[2].setValue(8, forKey: "Quantity")
        }
        #expect(try adapter.validateChanges(for: details).isEmpty)
        #expect(adapter.table(named: "Orders")!.rows[0]["Status"] == "changed")
        #expect(details.deletedRows.map { $0["DetailId"] } == [102])
    }

    @Test func aRowWhoseWritesDoNotValidateIsLeftAsItWas() throws {
        let adapter = try makeAdapter(details: """
            function beforeUpdate(row, old) {
                row.Product = 'Renamed';
                row.DetailId = row.DetailId + 1000;
            }
            """)
        let details = adapter.table(named: "OrderDetails")!
        details.withoutRules { try? details.rows[0].setValue(7, forKey: "Quantity") }
        let violations = try adapter.validateChanges(for: details)
        #expect(violations.first?.error.message == "OrderDetails.DetailId, row (DetailId=100): the field is auto-increment; the data source assigns its value")
        #expect(details.rows[0]["Product"] == "Widget", "no write of a rejected row is applied")
        #expect(details.rows[0]["DetailId"] == 100)
    }

    @Test func batchesReuseSharedArraysWithoutCarryingValuesOver() throws {
        // The first batch writes Quantity on every row; the second, smaller one writes nothing
        // and must see the rows' own values (shared arrays are reused between batches).
        let adapter = try makeAdapter(details: """
            function beforeUpdate(row, old) {
                if (row.UnitPrice > 100) row.Quantity = 1;
                if (row.Quantity === 1 && row.UnitPrice <= 100) fail('line ' + row.DetailId + ' has one item');
            }
            """)
        let details = adapter.table(named: "OrderDetails")!
        details.withoutRules { for row in details.rows { try? row.setValue(500.0, forKey: "UnitPrice") } }
        #expect(try adapter.validateChanges(for: details).isEmpty)
        #expect(details.rows.map { $0["Quantity"] } == [1, 1, 1])
        _ = try adapter.applyChanges(for: details)
        details.withoutRules {
            try? details.rows[1].setValue(50.0, forKey: "UnitPrice")
            try? details.rows[2].setValue(60.0, forKey: "UnitPrice")
            try? details.rows[2].setValue(3, forKey: "Quantity")
        }
        let violations = try adapter.validateChanges(for: details)
        #expect(violations.map(\.error.message) == ["line 101 has one item"])
        #expect(details.rows.map { $0["Quantity"] } == [1, 1, 3], "nothing written by the first batch comes back")
    }

    /// A rule that filters its own table by a calculated field starts a batch of the same
    /// table and scope inside the running one: each must keep its own cursor and rows.
    @Test func aBatchStartedInsideABatchOfTheSameTableHasCursorsOfItsOwn() throws {
        let script = """
            function lineTotal(row) { return row.Quantity * row.UnitPrice; }
            function beforeUpdate(row, old) {
                const before = [row.DetailId, row.Quantity, row.UnitPrice, old.Quantity];
                const big = lda.selectWhere('OrderDetails', 'Total > 40').map(r => r.DetailId).sort();
                const after = [row.DetailId, row.Quantity, row.UnitPrice, old.Quantity];
                if (before.join() !== after.join()) fail('the cursor moved: ' + before + ' became ' + after);
                if (row.Quantity > 3 && big.length > 0) fail('line ' + row.DetailId + ' with ' + big.join('+') + ' already big');
                row.Quantity = row.Quantity + 1;
            }
            """
        var results: [[String]] = []
        for round in 0..<3 {
            let adapter = try makeAdapter(details: script)
            try adapter.addCalculatedField(name: "Total", type: .float, table: "OrderDetails", function: "lineTotal")
            let details = adapter.table(named: "OrderDetails")!
            details.withoutRules {
                try? details.rows[0].setValue(4, forKey: "Quantity")
                try? details.rows[1].setValue(2, forKey: "Quantity")
                try? details.rows[2].setValue(9, forKey: "Quantity")
            }
            // The same validation twice in one scope: the second finds the cursors the first left.
            let violations = try adapter.validateChanges(for: details)
            let again = round == 0 ? [] : try adapter.validateChanges(for: details)
            results.append(violations.map(\.error.message) + ["|"] + again.map(\.error.message)
                           + details.rows.map { "\($0["Quantity"])" })
        }
        // Row 100 and 102 fail (their writes are dropped); 101's write is applied after the batch.
        let failures = ["line 100 with 101+102 already big", "line 102 with 101+102 already big"]
        #expect(results[0] == failures + ["|", "4", "3", "9"])
        #expect(results[1] == failures + ["|"] + failures + ["4", "4", "9"])
        #expect(results[2] == results[1])
    }

    @Test func aCursorKeptPastItsBatchSaysSoWhenRead() throws {
        let adapter = try makeAdapter(details: """
            var kept = null;
            function beforeUpdate(row, old) { kept = row; }
            function peekNumber(row) { return kept === null ? 0 : kept.Quantity; }
            function peekText(row) { return kept === null ? '' : kept.Product; }
            """)
        try adapter.addCalculatedField(name: "PeekNumber", type: .integer, table: "OrderDetails", function: "peekNumber")
        try adapter.addCalculatedField(name: "PeekText", type: .string, table: "OrderDetails", function: "peekText")
        let details = adapter.table(named: "OrderDetails")!
        details.withoutRules { try? details.rows[0].setValue(7, forKey: "Quantity") }
        #expect(try adapter.validateChanges(for: details).isEmpty)
        for field in ["PeekNumber", "PeekText"] {
            let error = #expect(throws: RelataError.self) { _ = try details.rows[1].value(forKey: field) }
            #expect(error?.description.contains("the row cursor was used after its batch ended") == true, "\(String(describing: error))")
        }
    }

    @Test func oldValuesAreReadOnly() throws {
        let adapter = try makeAdapter(details: "function beforeUpdate(row, old) { old.Quantity = 1; }")
        let details = adapter.table(named: "OrderDetails")!
        details.withoutRules { try? details.rows[0].setValue(5, forKey: "Quantity") }
        #expect(try adapter.validateChanges(for: details).first?.error.message.contains("read-only") == true)
    }

    @Test func calculatedFieldsComputeInOneBatch() throws {
        let adapter = try makeAdapter(details: "function lineTotal(row) { return row.Quantity * row.UnitPrice; }")
        try adapter.addCalculatedField(name: "Total", type: .currency, table: "OrderDetails", function: "lineTotal")
        try adapter.addCalculatedField(name: "Code", type: .string, table: "OrderDetails",
                                       function: "function (row) { return row.Product.slice(0, 3).toUpperCase() + row.DetailId }")
        let details = adapter.table(named: "OrderDetails")!
        try details.rows[1].setValue(4, forKey: "Quantity")
        let batch = try details.values(ofField: "Total")
        let single = try details.rows.map { try $0.value(forKey: "Total") }
        #expect(batch == single)
        #expect(try details.values(ofField: "Code") == ["WID100", "GAD101", "WID102"])
        #expect(try details.rows(sortedBy: "Total", ascending: false).map { $0["DetailId"] } == [101, 102, 100])
        #expect(try details.rows(where: "Total > 40").map { $0["DetailId"] } == [101, 102])
    }

    @Test func batchCalculationErrorsNameTheRow() throws {
        let adapter = try makeAdapter(details: "function bad(row) { if (row.Quantity === 5) throw new Error('five'); return 1; }")
        try adapter.addCalculatedField(name: "Bad", type: .integer, table: "OrderDetails", function: "bad")
        let error = #expect(throws: RelataError.self) { _ = try adapter.table(named: "OrderDetails")!.values(ofField: "Bad") }
        #expect(error?.description.contains("row (DetailId=102)") == true)
        #expect(error?.description.contains("five") == true)
    }

    /// The cursors' getters are compiled for the values they have seen: after batch upon batch
    /// without a NULL, a NULL must still read as `null` — in a rule, an original and a calculation.
    @Test func aNullAfterManyBatchesWithoutOneStillReadsAsNull() throws {
        let adapter = try makeAdapter(details: """
            function beforeUpdate(row, old) {
                if (row.Quantity === null) fail('no quantity');
                if (old.UnitPrice === null) fail('no price before');
            }
            function known(row) { return row.Quantity === null ? -1 : row.Quantity; }
            """)
        try adapter.addCalculatedField(name: "Known", type: .integer, table: "OrderDetails", function: "known")
        let details = adapter.table(named: "OrderDetails")!
        try details.loadRows(named: (0..<20_000).map { index in
            ["DetailId": .integer(Int64(1_000 + index)), "OrderId": 10, "Quantity": .integer(Int64(index + 1)), "UnitPrice": 1]
        })
        try details.withoutRules {
            for row in details.rows { try row.setValue(.integer((row["Quantity"].integerValue ?? 0) + 1), forKey: "Quantity") }
        }
        for _ in 0..<15 {
            #expect(try adapter.validateChanges(for: details).isEmpty)
            #expect(try details.values(ofField: "Known").contains(-1) == false)
        }
        let emptied = details.rows[7_000]
        try details.withoutRules { try emptied.setValue(.null, forKey: "Quantity") }
        let violations = try adapter.validateChanges(for: details)
        #expect(violations.map(\.error.message) == ["no quantity"])
        #expect(violations.first?.row === emptied)
        #expect(try details.values(ofField: "Known").filter { $0 == -1 }.count == 1)
    }

    /// Failures come back grouped by description: rows sharing one keep it, rows with their own
    /// keep theirs, whatever characters a message holds, and a thrown non-Error is named as one.
    @Test func eachFailedRowKeepsItsOwnMessageWhenManyShareOne() throws {
        let adapter = try makeAdapter(details: """
            function beforePost(row) {
                const q = row.Quantity;
                if (q % 10 === 1) fail('shared');
                if (q % 10 === 2) fail('own \\u0002' + q + '\\u0003');
                if (q % 10 === 3) throw 'a string ' + q;
            }
            """)
        let details = adapter.table(named: "OrderDetails")!
        try details.withoutRules {
            for index in 0..<1_000 { try details.addNewRow(values: ["OrderId": 10, "Quantity": .integer(Int64(index))]) }
        }
        let violations = try adapter.validateChanges(for: details)
        #expect(violations.count == 300)
        for violation in violations {
            let quantity = violation.row["Quantity"].integerValue ?? -1
            switch quantity % 10 {
            case 1: #expect(violation.error.message == "shared")
            case 2: #expect(violation.error.message == "own \u{2}\(quantity)\u{3}")
            case 3: #expect(violation.error.message.contains("a string \(quantity)"))
            default: Issue.record("row \(quantity) should pass")
            }
            #expect(violation.error.row == violation.row.label)
        }
    }

    @Test func manyRowsInSeveralChunks() throws {
        let adapter = try makeAdapter(details: "function beforePost(row) { if (row.Quantity % 1000 === 999) fail('unlucky ' + row.Quantity); }")
        let details = adapter.table(named: "OrderDetails")!
        try details.withoutRules {
            for index in 0..<150_000 { try details.addNewRow(values: ["OrderId": 10, "Quantity": .integer(Int64(index))]) }
        }
        let violations = try adapter.validateChanges(for: details)
        let found = Set(violations.map(\.error.message))
        let missing = (0..<150).map { "unlucky \($0 * 1000 + 999)" }.filter { !found.contains($0) }
        #expect(missing.isEmpty)
        #expect(violations.count == 150)
        #expect(violations.first?.error.message == "unlucky 999")
        #expect(violations.last?.error.message == "unlucky 149999")
    }
}
