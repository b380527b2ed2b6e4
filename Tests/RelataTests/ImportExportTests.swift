import Foundation
import Testing
@testable import Relata

@Suite struct ImportExportTests {
    @Test func csvWithQuotesEmbeddedNewlinesAndNulls() throws {
        let csv = """
            ClientId,ClientName,ContactAddress,ClientDiscount
            1,Acme,"1 Road, Runner Way",0.05
            2,"Globex ""The"" Corp","line one
            line two",
            3,Initech,"",0
            """
        let table = try DataTable(name: "Clients", fields: clientFields, csv: csv)
        #expect(table.rowCount == 3)
        #expect(table.rows[0]["ContactAddress"] == "1 Road, Runner Way")
        #expect(table.rows[1]["ClientName"] == "Globex \"The\" Corp")
        #expect(table.rows[1]["ContactAddress"] == "line one\nline two")
        #expect(table.rows[1]["ClientDiscount"] == .null, "an empty cell is NULL")
        #expect(table.rows[2]["ContactAddress"] == "", "a quoted empty cell is the empty string")
        #expect(table.rows[0]["ContactPhone"] == .null, "fields without a column are NULL")
        #expect(table.rows.allSatisfy { $0.rowState == .unchanged })
    }

    @Test func csvErrorsNameLineColumnAndField() {
        let bad = relataError { _ = try DataTable(name: "Clients", fields: clientFields, csv: "ClientId,ClientName,ClientDiscount\n1,A,0.1\n2,B,lots\n") }
        #expect(bad?.code == .invalidImport)
        #expect(bad?.field == "ClientDiscount")
        #expect(bad?.location == "line 3, column 3")
        let header = relataError { _ = try DataTable(name: "Clients", fields: clientFields, csv: "ClientId,Bogus\n1,2\n") }
        #expect(header?.message.contains("'Bogus'") == true)
        let quote = relataError { _ = try DataTable(name: "Clients", fields: clientFields, csv: "ClientId,ClientName\n1,\"open\n") }
        #expect(quote?.location == "line 2")
        let wide = relataError { _ = try DataTable(name: "Clients", fields: clientFields, csv: "ClientId\n1,2\n") }
        #expect(wide?.location == "line 2")
    }

    @Test func jsonImportExportRoundTripOfEveryType() throws {
        let fields = [
            FieldDefinition("Id", .largeInt, primaryKey: true), FieldDefinition("Ratio", .float),
            FieldDefinition("Price", .currency), FieldDefinition("Active", .boolean),
            FieldDefinition("Name", .wideString), FieldDefinition("At", .dateTime),
            FieldDefinition("Key", .guid), FieldDefinition("Bytes", .blob),
        ]
        let source = try DataTable(name: "All", fields: fields)
        try source.loadRows([
            [1, 0.5, .decimal(Decimal(string: "19.99")!), true, "naïve", .date(Date(timeIntervalSince1970: 1_700_000_000)),
             .guid(UUID()), .blob(Data([1, 2, 3]))],
            [2, .null, .null, .null, .null, .null, .null, .null],
        ])
        let data = try source.jsonData()
        let copy = try DataTable(name: "All", fields: fields, json: data)
        for (a, b) in zip(source.rows, copy.rows) {
            for field in fields { #expect(a[field.name] == b[field.name], "\(field.name)") }
        }
    }

    @Test func jsonErrors() {
        let notArray = relataError { _ = try DataTable(name: "C", fields: clientFields, json: Data(#"{"a":1}"#.utf8)) }
        #expect(notArray?.code == .invalidImport)
        let key = relataError { _ = try DataTable(name: "C", fields: clientFields, json: Data(#"[{"ClientId":1,"ClientName":"A"},{"Oops":2}]"#.utf8)) }
        #expect(key?.field == "Oops")
        let type = relataError { _ = try DataTable(name: "C", fields: clientFields, json: Data(#"[{"ClientName":true}]"#.utf8)) }
        #expect(type?.location == "object 1")
        #expect(type?.field == "ClientName")
        let broken = relataError { _ = try DataTable(name: "C", fields: clientFields, json: Data("[{".utf8)) }
        #expect(broken?.code == .invalidImport)
    }

    @Test func csvExportReadsBack() throws {
        let clients = try makeClients()
        try clients.rows[0].setValue("Acme, \"Ltd\"", forKey: "ClientName")
        let copy = try DataTable(name: "Clients", fields: clientFields, csv: clients.csvText())
        #expect(copy.rows.map { $0["ClientName"] } == clients.rows.map { $0["ClientName"] })
        #expect(copy.rows.map { $0["AdditionalInfo"] } == clients.rows.map { $0["AdditionalInfo"] })
    }

    @Test func fieldDefinitionsAreCodableWithDefaults() throws {
        let json = #"[{"name":"ClientId","type":"autoInc","primaryKey":true},{"name":"ClientName","type":"string","size":50,"required":true,"defaultValue":{"string":"?"}}]"#
        let fields = try JSONDecoder().decode([FieldDefinition].self, from: Data(json.utf8))
        #expect(fields[0].autoIncrement && fields[0].primaryKey && fields[0].logChanges)
        #expect(fields[1].size == 50 && fields[1].required && fields[1].defaultValue == "?")
        #expect(try JSONDecoder().decode([FieldDefinition].self, from: JSONEncoder().encode(fields)) == fields)
    }
}
