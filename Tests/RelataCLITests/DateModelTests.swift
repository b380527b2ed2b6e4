import Foundation
import Testing
import RelataTestSupport

/// One date everywhere: rules see UTC whatever the host's time zone, a date a rule makes is
/// stored to the millisecond without float noise, and an old date is proleptic Gregorian.
@Suite(.timeLimit(.minutes(5))) struct DateModelTests {
    static func schema(in folder: TemporaryFolder) throws -> String {
        _ = try folder.write("T.js", """
            function beforePost(row) {
                const local = new Date(2026, 0, 15, 9, 30);
                row.Made = local;
                row.Computed = new Date(1732612347956);
                row.Shown = [local.getHours(), local.getTimezoneOffset(), local.toISOString(),
                             new Date('2026-01-15T09:30').getTime() === local.getTime(), String(local),
                             row.Old.getUTCDate() + '/' + row.Old.getDate()].join(' | ');
            }
            """)
        _ = try folder.write("T.csv", "Id,N,Old\n1,1,1200-06-15T12:00:00Z\n")
        return try folder.write("s.schema.json", """
            {"name": "S", "tables": [{"name": "T", "script": "T.js", "data": "T.csv", "fields": [
              {"name": "Id", "type": "integer", "primaryKey": true}, {"name": "N", "type": "integer"},
              {"name": "Old", "type": "dateTime"}, {"name": "Made", "type": "dateTime"}, {"name": "Computed", "type": "dateTime"},
              {"name": "Shown", "type": "string", "size": 200}]}]}
            """)
    }

    @Test(arguments: ["America/New_York", "Asia/Kolkata", "UTC"])
    func rulesSeeUTCAndStoreExactDatesWhateverTheHostsTimeZone(zone: String) async throws {
        let folder = try TemporaryFolder()
        let schema = try Self.schema(in: folder)
        let edits = try folder.write("e.json", #"[{"update": "T", "key": 1, "values": {"N": 2}}]"#)
        let briefcase = folder.url.appendingPathComponent("t.briefcase").path
        let run = try await RelataProcess.run(["run", schema, "--edits", edits, "--no-apply", "--save-briefcase", briefcase], environment: ["TZ": zone])
        #expect(run.status == 0, "\(run.output)\(run.errorOutput)")
        let export = try await RelataProcess.run(["briefcase", "export", briefcase, "--table", "T"], environment: ["TZ": zone])
        let rows = try JSONSerialization.jsonObject(with: Data(export.output.utf8)) as? [[String: Any]]
        let row = try #require(rows?.first)
        #expect(row["Made"] as? String == "2026-01-15T09:30:00Z")
        #expect(row["Computed"] as? String == "2024-11-26T09:12:27.956Z", "no float noise")
        #expect(row["Old"] as? String == "1200-06-15T12:00:00Z")
        #expect(row["Shown"] as? String
                == "9 | 0 | 2026-01-15T09:30:00.000Z | true | Thu Jan 15 2026 09:30:00 GMT+0000 (Coordinated Universal Time) | 15/15")
    }
}
