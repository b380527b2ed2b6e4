import Foundation
import Relata
import RelataTestSupport
import Testing
@testable import RelataScript

/// A delta's change events run many changes per call into JavaScript: what each handler sees,
/// the verdicts, and the time limit must be what one call per event and change gives.
@Suite struct ChangeEventRunTests {
    /// An adapter whose `Lines` table has rows 1…count with quantity 0, each changed to its id
    /// with the rules off, so only the delta events run.
    func changedLines(_ count: Int, script: String, schemaScript: String? = nil, timeLimit: Duration = .seconds(2),
                      recorder: LogRecorder = LogRecorder()) throws -> (LocalDataAdapter, DataTable) {
        let adapter = try LocalDataAdapter(engine: ScriptEngine(timeLimit: timeLimit), logger: recorder.logger)
        if let schemaScript { try adapter.setSchemaScript(RuleScript(schemaScript, fileName: "schema.js")) }
        let lines = try DataTable(name: "Lines", fields: [FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("Quantity", .integer)])
        try lines.loadRows((1...count).map { [.integer(Int64($0)), .integer(0)] })
        try adapter.addTable(lines, script: RuleScript(script, fileName: "Lines.js"))
        try lines.withoutRules {
            for row in lines.rows { try row.setValue(row["Id"], forKey: "Quantity") }
        }
        return (adapter, lines)
    }

    /// What the log says `seen` held (the script logs it as JSON from `afterProcessDelta`).
    func seen(_ recorder: LogRecorder) throws -> [String] {
        let line = try #require(recorder.messages.last { $0.hasPrefix("[") })
        return try JSONDecoder().decode([String].self, from: Data(line.utf8))
    }

    @Test func eachChangeSeesTheVerdictsOfTheChangesBeforeIt() throws {
        let recorder = LogRecorder()
        let (adapter, lines) = try changedLines(5_000, script: """
            const seen = [];
            function beforeProcessDeltaChange(delta, change) {
                const i = seen.length, previous = delta[i - 1];
                seen.push(i === 0 ? 'first' : previous.status + ':' + (previous.message || ''));
                if (change.newValues.Quantity % 7 === 0) fail('seven ' + change.newValues.Quantity);
            }
            function afterProcessDeltaChange(delta, change) {
                if (change.status !== 'resolved' || change.message !== null) fail('after saw ' + change.status);
                if (change.newValues.Quantity % 11 === 0) fail('eleven');
            }
            function afterProcessDelta(delta) { log(JSON.stringify(seen)); }
            """, recorder: recorder)
        let verdicts = try adapter.validateApply(for: [lines])[0].changes
        func message(_ quantity: Int) -> String? {
            quantity % 7 == 0 ? "seven \(quantity)" : quantity % 11 == 0 ? "eleven" : nil
        }
        #expect(verdicts.map(\.message) == (1...5_000).map(message))
        #expect(verdicts.map(\.status) == (1...5_000).map { message($0) == nil ? .resolved : .failed })
        let expected = ["first"] + (1..<5_000).map { quantity in message(quantity).map { "failed:\($0)" } ?? "resolved:" }
        #expect(try seen(recorder) == expected)
    }

    /// A delta of several blocks, each packed on another thread while JavaScript makes the objects
    /// of the one before (``DeltaView/callsPerBlock``), and a tail small enough to pack on the spot:
    /// every change shows its own values, in its place.
    @Test func everyChangeOfALargeDeltaIsShownInItsPlace() throws {
        let count = DeltaView.changesPerCall * DeltaView.callsPerBlock * 2 + 1_500
        let recorder = LogRecorder()
        let (adapter, lines) = try changedLines(count, script: """
            function beforeProcessDelta(delta) {
                const wrong = [];
                for (let i = 0; i < delta.count; i++) {
                    const change = delta[i];
                    if (change.oldValues.Id !== i + 1 || change.oldValues.Quantity !== 0 || change.newValues.Quantity !== i + 1
                        || change !== delta.changes[i] || change.type !== 'update' || change.status !== 'pending') wrong.push(String(i));
                }
                log(JSON.stringify(wrong));
            }
            function beforeProcessDeltaChange(delta, change) {
                if (change.newValues.Quantity % 1000 === 0) fail('thousand ' + change.newValues.Quantity);
            }
            """, recorder: recorder)
        let verdicts = try adapter.validateApply(for: [lines])[0].changes
        #expect(try seen(recorder) == [])
        #expect(verdicts.count == count)
        #expect(verdicts.filter { $0.status == .failed }.map(\.message) == (1...count).filter { $0 % 1000 == 0 }.map { "thousand \($0)" })
    }

    @Test func aChangeThatCameInFailedIsSkipped() throws {
        let recorder = LogRecorder()
        let (adapter, lines) = try changedLines(6, script: """
            const seen = [];
            function beforeProcessDelta(delta) { }
            function beforeProcessDeltaChange(delta, change) { seen.push(String(change.newValues.Quantity)); }
            function afterProcessDelta(delta) { log(JSON.stringify(seen)); }
            """, recorder: recorder)
        var delta = try lines.makeDelta()
        delta.changes[2].fail("refused before the delta events")
        delta.changes[3].fail("refused before the delta events")
        let processed = try adapter.runtime.withEnvironment(RuleEnvironment(dataAccess: adapter.data)) {
            try DeltaProcessor(runtime: adapter.runtime).validate([delta], store: TableStore(data: adapter.data))
        }
        #expect(processed[0].changes.map(\.status) == [.resolved, .resolved, .failed, .failed, .resolved, .resolved])
        #expect(try seen(recorder) == ["1", "2", "5", "6"])
    }

    @Test func aHandlerThatReturnsAPromiseFailsItsChangeOnly() throws {
        let (adapter, lines) = try changedLines(4, script: """
            function beforeProcessDeltaChange(delta, change) { if (change.newValues.Quantity === 2) return Promise.resolve(); }
            async function afterProcessDeltaChange(delta, change) { if (change.newValues.Quantity !== 4) return; }
            """)
        let verdicts = try adapter.validateApply(for: [lines])[0].changes
        #expect(verdicts.map(\.status) == [.failed, .failed, .failed, .failed])
        #expect(verdicts[1].message?.contains("beforeProcessDeltaChange returned a promise") == true)
        #expect(verdicts[0].message?.contains("afterProcessDeltaChange returned a promise") == true)
    }

    @Test(.timeLimit(.minutes(1)))
    func aRunawayChangeFailsAloneAndTheNextChangesRun() throws {
        let (adapter, lines) = try changedLines(10, script: """
            function beforeProcessDeltaChange(delta, change) { if (change.newValues.Quantity === 3) while (true) {} }
            function afterProcessDeltaChange(delta, change) { if (change.newValues.Quantity === 7) for (;;) {} }
            """, timeLimit: .milliseconds(200))
        let verdicts = try adapter.validateApply(for: [lines])[0].changes
        #expect(verdicts.map(\.status) == (1...10).map { [3, 7].contains($0) ? .failed : .resolved })
        for failed in [verdicts[2], verdicts[6]] {
            #expect(failed.failure?.kind == .ruleError)
            #expect(failed.message?.contains("time limit") == true)
            #expect(failed.message?.hasPrefix("Lines.js: ") == true)
        }
        #expect(verdicts[2].message?.contains("beforeProcessDeltaChange") == true)
        #expect(verdicts[6].message?.contains("afterProcessDeltaChange") == true)
    }

    /// The time limit bounds one change's run, as with a call per change: many changes that
    /// together run longer than the limit all pass. (A time bound: `Scripts/test.sh` leaves it out
    /// of the run where JavaScriptCore collects every few allocations, which fails it on both paths.)
    @Test(.timeLimit(.minutes(1)), arguments: [false, true])
    func changesThatTogetherRunPastTheTimeLimitAllPass(oneCallPerChange: Bool) throws {
        let (adapter, lines) = try changedLines(400, script: """
            function beforeProcessDeltaChange(delta, change) {
                const start = Date.now();
                while (Date.now() - start < 1) {}
            }
            """, schemaScript: oneCallPerChange ? "function beforeProcessDeltaChange(delta, change) { }" : nil, timeLimit: .milliseconds(150))
        let verdicts = try adapter.validateApply(for: [lines])[0].changes
        #expect(verdicts.allSatisfy { $0.status == .resolved }, "\(verdicts.compactMap(\.message).prefix(2))")
    }

    /// The same delta through the batched path (one script handles the change events) and
    /// through one call per event and change (a schema-wide script handles them too, doing
    /// nothing): the verdicts, messages, kinds and locations agree.
    @Test(.timeLimit(.minutes(1)))
    func bothPathsGiveTheSameVerdicts() throws {
        let script = """
            let calls = 0;
            function beforeProcessDeltaChange(delta, change) {
                calls++;
                const q = change.newValues.Quantity;
                if (q % 13 === 0) fail('thirteen');
                if (q % 17 === 0) throw 'a string ' + q;
                if (q % 19 === 0) null.field;
                if (q === 40) while (true) {}
                if (q === 41) return Promise.resolve();
                if (q === 42) return new Proxy({}, { get() { throw new Error('no then here'); } });
                if (q === 43) Object.defineProperty(change, 'status', { get() { return 'mine'; }, set() { throw new Error('no status'); } });
                if (q === 44) Object.defineProperty(change, 'message', { value: 'kept', writable: false });
                if (q > 1 && delta[q - 2].status === 'failed' && q % 2 === 0) fail('after a failure: ' + delta[q - 2].message);
                change.status = 'tampered';
            }
            function afterProcessDeltaChange(delta, change) {
                if (change.newValues.Quantity % 23 === 0) fail('twenty-three, ' + change.status);
                if (change.newValues.Quantity === 45) fail('44 shows ' + delta[43].status + ', ' + delta[43].message + '; 45 follows ' + delta[42].status);
            }
            """
        // A second: this test also runs with JavaScriptCore collecting every few allocations.
        let (batched, batchedLines) = try changedLines(120, script: script, timeLimit: .seconds(1))
        let (single, singleLines) = try changedLines(120, script: script, schemaScript: "function beforeProcessDeltaChange(delta, change) { }",
                                                     timeLimit: .seconds(1))
        let fast = try batched.validateApply(for: [batchedLines])[0].changes
        let slow = try single.validateApply(for: [singleLines])[0].changes
        #expect(fast.filter { $0.status == .failed }.count > 20)
        #expect(fast.map(\.status) == slow.map(\.status))
        #expect(fast.map(\.message) == slow.map(\.message))
        #expect(fast.map(\.failure?.kind) == slow.map(\.failure?.kind))
        #expect(fast.map(\.failure?.location) == slow.map(\.failure?.location))
    }

    /// A change's `oldValues` and `newValues` are plain objects whose every field is an own data
    /// property, in name order: a setter a script put on `Object.prototype` is not reached, and a
    /// field named `__proto__` or `constructor` is a value, not the object's prototype.
    @Test func changeValuesAreOwnPropertiesWhateverObjectPrototypeHolds() throws {
        let recorder = LogRecorder()
        let adapter = try LocalDataAdapter(engine: ScriptEngine(timeLimit: .seconds(2)), logger: recorder.logger)
        let odd = try DataTable(name: "Odd", fields: [FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("__proto__", .string),
                                                      FieldDefinition("constructor", .integer), FieldDefinition("Quantity", .integer)])
        try odd.loadRows((1...130).map { [.integer(Int64($0)), .string("p\($0)"), .integer(Int64(-$0)), .integer(0)] })
        try adapter.addTable(odd, script: RuleScript("""
            Object.defineProperty(Object.prototype, 'Quantity', { set(value) { throw new Error('the prototype setter ran'); }, configurable: true });
            const seen = [];
            function beforeProcessDeltaChange(delta, change) {
                const values = change.newValues;
                seen.push([Object.keys(values).join(','), Object.getPrototypeOf(values) === Object.prototype,
                           Object.prototype.hasOwnProperty.call(values, '__proto__'), values.__proto__, values.constructor, values.Quantity,
                           Object.keys(change.oldValues).join(','), change.oldValues.Quantity, change.Quantity].join('|'));
                values.Quantity = 7;
            }
            function afterProcessDelta(delta) { log(JSON.stringify(seen)); }
            """, fileName: "Odd.js"))
        try odd.withoutRules {
            for row in odd.rows { try row.setValue(.integer(row["Id"].integerValue! * 10), forKey: "Quantity") }
        }
        let verdicts = try adapter.validateApply(for: [odd])[0].changes
        #expect(verdicts.allSatisfy { $0.status == .resolved }, "\(verdicts.compactMap(\.message).prefix(3))")
        let expected = (1...130).map { id in
            "Id,Quantity,__proto__,constructor|true|true|p\(id)|-\(id)|\(id * 10)|Id,Quantity,__proto__,constructor|0|\(id * 10)"
        }
        #expect(try seen(recorder) == expected)
    }

    /// A change object shows its kind, verdict and fields however the delta mixes inserts, updates
    /// and deletes, and whatever the script did to the globals first: `change.Field` is the new
    /// value (the old one for a delete), a field named as a change property (`status`) leaves the
    /// change's own, and no setter on `Object.prototype` nor a replaced `JSON.stringify` or
    /// `Object.hasOwn` reaches the objects.
    @Test func aChangeShowsItsKindVerdictAndFieldsWhateverTheGlobalsHold() throws {
        let recorder = LogRecorder()
        let adapter = try LocalDataAdapter(engine: ScriptEngine(timeLimit: .seconds(2)), logger: recorder.logger)
        let table = try DataTable(name: "Lines", fields: [FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("status", .string),
                                                          FieldDefinition("toString", .integer), FieldDefinition("Quantity", .integer)])
        try table.loadRows((1...100).map { [.integer(Int64($0)), .string("stored"), .integer(Int64(-$0)), .integer(0)] })
        try adapter.addTable(table, script: RuleScript("""
            const stringify = JSON.stringify;
            for (const name of ['status', 'type', 'oldValues', 'Quantity', 'isInsert'])
                Object.defineProperty(Object.prototype, name, { set(value) { throw new Error('the prototype setter ran for ' + name); }, configurable: true });
            JSON.stringify = () => 'the same for every list';
            Object.hasOwn = () => false;
            const seen = [];
            function beforeProcessDeltaChange(delta, change) {
                seen.push([change.type, change.isInsert, change.isUpdate, change.isDelete, change.failed, change.error, change.status,
                           change.Id, change.Quantity, change.toString, Object.getPrototypeOf(Object.getPrototypeOf(change)) === Object.prototype].join('|'));
                if (change.Id === 3) fail('not three');
            }
            function afterProcessDeltaChange(delta, change) { seen.push(['after', change.Id, change.status, change.failed, change.error].join('|')); }
            function afterProcessDelta(delta) {
                seen.push(delta.changes.map((change) => [change.Id, change.status, change.failed, change.error].join('|')).join(' '));
                log(stringify(seen));
            }
            """, fileName: "Lines.js"))
        try table.withoutRules {
            for row in table.rows.prefix(70) where row["Id"].integerValue! % 2 == 1 { try row.setValue(.integer(row["Id"].integerValue! * 10), forKey: "Quantity") }
            for row in table.rows.filter({ $0["Id"].integerValue! % 2 == 0 }).prefix(30) { try table.removeRow(row) }
            for id in 101...140 { _ = try table.addNewRow(values: ["Id": .integer(Int64(id)), "status": .string("new"), "toString": .integer(7), "Quantity": .integer(Int64(id))]) }
        }
        let delta = try adapter.validateApply(for: [table])[0]
        #expect(delta.changes.map(\.status) == delta.changes.map { $0.newValues["Id"] == .integer(3) ? .failed : .resolved })
        var expected: [String] = []
        for change in delta.changes {
            let id = (change.type == .delete ? change.oldValues["Id"] : change.newValues["Id"])!.integerValue!
            let quantity = change.type == .insert ? id : change.type == .delete ? 0 : id * 10
            let toString = change.type == .insert ? 7 : -id
            let type = change.type.rawValue
            expected.append("\(type)|\(type == "insert")|\(type == "update")|\(type == "delete")|false||pending|\(id)|\(quantity)|\(toString)|true")
            if id != 3 { expected.append("after|\(id)|resolved|false|") }
        }
        expected.append(delta.changes.map { change in
            let id = (change.type == .delete ? change.oldValues["Id"] : change.newValues["Id"])!.integerValue!
            return id == 3 ? "3|failed|true|not three" : "\(id)|resolved|false|"
        }.joined(separator: " "))
        #expect(delta.changes.count == 35 + 30 + 40)
        #expect(try seen(recorder) == expected)
    }

    /// The same lines as the JavaScript client's "delta events get change objects of the shape
    /// every site gives them" (`Clients/JavaScript/test/table.test.js`): one implementation of the
    /// change objects (`rule-environment.js`) on every site.
    @Test func aChangeObjectHasTheShapeOfEverySite() throws {
        let recorder = LogRecorder()
        let adapter = try LocalDataAdapter(engine: ScriptEngine(timeLimit: .seconds(2)), logger: recorder.logger)
        let lines = try DataTable(name: "Lines", fields: [FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("Quantity", .integer)])
        try lines.loadRows([[.integer(1), .integer(5)], [.integer(2), .integer(6)]])
        try adapter.addTable(lines, script: RuleScript("""
            function beforeProcessDeltaChange(delta, change) {
                log([change.type, Object.keys(change).join(','), change.isInsert, change.isUpdate, change.isDelete,
                     change.changeID === change.changeId, change.Quantity, change.failed, change.error].join('|'));
            }
            function afterProcessDelta(delta) { log(delta.length + ' ' + Object.keys(delta).join(',') + ' ' + delta[0].status); }
            """, fileName: "Lines.js"))
        try lines.rows[0].setValue(.integer(50), forKey: "Quantity")
        try lines.removeRow(lines.rows[1])
        _ = try lines.addNewRow(values: ["Id": .integer(3), "Quantity": .integer(7)])
        let verdicts = try adapter.validateApply(for: [lines])[0].changes
        #expect(verdicts.map(\.status) == [.resolved, .resolved, .resolved])
        let own = "type,changeId,changeID,oldValues,newValues,status,message"
        #expect(recorder.messages.suffix(4) == [
            "update|\(own)|false|true|false|true|50|false|",
            "delete|\(own)|false|false|true|true|6|false|",
            "insert|\(own)|true|false|false|true|7|false|",
            "3 0,1,2,name,count,length,changes resolved",
        ])
    }

    /// Each change's values reach the script by name however their dictionaries are laid out:
    /// changes `makeDelta` built (copies of one dictionary), hand-made ones with the same names
    /// inserted in other orders, and ones with fewer names, mixed and across several calls.
    @Test func changeValuesAreShownByNameWhateverTheirDictionaryLayout() throws {
        let recorder = LogRecorder()
        let adapter = try LocalDataAdapter(engine: ScriptEngine(timeLimit: .seconds(2)), logger: recorder.logger)
        let names = ["Id", "Quantity", "A rather long field name", "Größe"]
        let table = try DataTable(name: "Lines", fields: [FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("Quantity", .integer),
                                                          FieldDefinition("A rather long field name", .integer), FieldDefinition("Größe", .integer)])
        try table.loadRows((1...150).map { id in [.integer(Int64(id)), .integer(0), .integer(0), .integer(0)] })
        try adapter.addTable(table, script: RuleScript("""
            const seen = [];
            function beforeProcessDeltaChange(delta, change) { seen.push(JSON.stringify([change.oldValues, change.newValues])); }
            function afterProcessDelta(delta) { log(JSON.stringify(seen)); }
            """, fileName: "Lines.js"))
        try table.withoutRules {
            for row in table.rows {
                let id = row["Id"].integerValue!
                for (offset, name) in names.dropFirst().enumerated() { try row.setValue(.integer(id * 10 + Int64(offset)), forKey: name) }
            }
        }
        var changes = try table.makeDelta().changes
        func handMade(_ id: Int, names: [String]) -> DeltaChange {
            var old = FieldValues(), new = FieldValues()
            for name in names {   // inserted in the order given: another layout than makeDelta's
                let offset = Int64(names.firstIndex(of: name)!)
                old[name] = name == "Id" ? .integer(Int64(id)) : .integer(-Int64(id) * 10 - offset)
                new[name] = name == "Id" ? .integer(Int64(id)) : .integer(Int64(id) * 10 + offset)
            }
            return DeltaChange(changeId: 10_000 + id, type: .update, oldValues: old, newValues: new)
        }
        for position in stride(from: 140, through: 3, by: -7) {
            let id = 1_000 + position
            changes.insert(position % 2 == 0 ? handMade(id, names: names.reversed()) : handMade(id, names: ["Quantity", "Id"]), at: position)
        }
        let delta = Delta(tableName: "Lines", keyFields: ["Id"], loggedFields: [], changes: changes)
        _ = try adapter.runtime.withEnvironment(RuleEnvironment(dataAccess: adapter.data)) {
            try DeltaProcessor(runtime: adapter.runtime).validate([delta], store: TableStore(data: adapter.data))
        }
        func json(_ values: FieldValues) -> String {
            "{" + values.keys.sorted().map { "\"\($0)\":\(values[$0]!.integerValue!)" }.joined(separator: ",") + "}"
        }
        #expect(try seen(recorder) == changes.map { "[\(json($0.oldValues)),\(json($0.newValues))]" })
    }
}
