import Foundation
import Testing
@testable import Relata

@Suite struct ExpressionTests {
    func names(_ expression: String, _ parameters: [String: Value] = [:]) throws -> [String] {
        try makeClients().rows(where: expression, parameters: parameters).map { $0["ClientName"].text }
    }

    @Test func comparisonsAndLogic() throws {
        #expect(try names("ClientDiscount > 0") == ["Acme", "Globex"])
        #expect(try names("ClientDiscount >= 0.05 AND ClientName <> 'Acme'") == ["Globex"])
        #expect(try names("ClientId = 1 OR ClientId = 3") == ["Acme", "Initech"])
        #expect(try names("NOT (ClientId = 1)") == ["Globex", "Initech"])
        #expect(try names("0.05 < ClientDiscount") == ["Globex"], "constant on the left")
        #expect(try names("ClientId * 2 + 1 = 5") == ["Globex"])
    }

    @Test func threeValuedNullLogic() throws {
        #expect(try names("ContactPhone = '555-0100'") == ["Acme"])
        #expect(try names("ContactPhone <> '555-0100'") == ["Initech"], "NULL <> x is unknown, not true")
        #expect(try names("NOT (ContactPhone = 'x')") == ["Acme", "Initech"])
        #expect(try names("ContactPhone IS NULL") == ["Globex"])
        #expect(try names("ContactPhone IS NOT NULL") == ["Acme", "Initech"])
        #expect(try names("ContactPhone = NULL") == [], "= NULL is never true")
        #expect(try names("ContactPhone = 'x' OR ClientId = 2") == ["Globex"], "unknown OR true is true")
        #expect(try names("ContactAddress IN ('Cypress Creek', NULL)") == ["Globex"])
        #expect(try names("ContactAddress NOT IN ('Cypress Creek', NULL)") == [], "NOT IN with a NULL is never true")
    }

    @Test func inLikeBetween() throws {
        #expect(try names("ClientId IN (1, 3)") == ["Acme", "Initech"])
        #expect(try names("ClientId NOT IN (1, 3)") == ["Globex"])
        #expect(try names("ClientName LIKE 'g%'") == ["Globex"], "LIKE is case-insensitive")
        #expect(try names("ClientName LIKE '_cm_'") == ["Acme"])
        #expect(try names("ClientName NOT LIKE '%e%'") == [])
        #expect(try names("ClientDiscount BETWEEN 0.01 AND 0.07") == ["Acme"])
        #expect(try names("ClientId NOT BETWEEN 2 AND 3") == ["Acme"])
        let table = try DataTable(name: "T", fields: [FieldDefinition("Code", .string)])
        try table.loadRows([["100%"], ["100x"]])
        #expect(try table.rows(where: "Code LIKE '100!%' ESCAPE '!'").map { $0["Code"] } == ["100%"])
    }

    @Test func parametersAndFunctions() throws {
        #expect(try names("ClientDiscount >= :min", ["min": 0.1]) == ["Globex"])
        #expect(try names("UPPER(ClientName) = 'ACME'") == ["Acme"])
        #expect(try names("LENGTH(ClientName) = 6") == ["Globex"])
        #expect(try names("COALESCE(ContactPhone, 'none') = 'none'") == ["Globex"])
        #expect(try names("SUBSTRING(ClientName, 2, 3) = 'nit'") == ["Initech"])
        #expect(try names("ROUND(ClientDiscount * 100) = 5") == ["Acme"])
        #expect(try names("ClientName || '!' = 'Acme!'") == ["Acme"])
        #expect(try names("[ClientName] = 'Acme' AND \"ClientId\" = 1") == ["Acme"])
    }

    @Test func datesCompareWithIsoStrings() throws {
        let table = try DataTable(name: "Events", fields: [FieldDefinition("At", .dateTime), FieldDefinition("Id", .guid)])
        let guid = UUID()
        try table.loadRows([[.date(Date(timeIntervalSince1970: 1_709_251_200)), .guid(guid)], [.date(Date(timeIntervalSince1970: 0)), .null]])
        #expect(try table.rows(where: "At >= '2024-01-01'").count == 1)
        #expect(try table.rows(where: "YEAR(At) = 1970").count == 1)
        #expect(try table.rows(where: "Id = :g", parameters: ["g": .string(guid.uuidString)]).count == 1)
    }

    @Test func syntaxErrorsGiveTheColumn() {
        let unclosed = relataError { _ = try Expression("ClientId = (1 + 2") }
        #expect(unclosed?.code == .expressionSyntax)
        #expect(unclosed?.location == "column 18")
        #expect(unclosed?.message.contains("expected ')'") == true)

        let string = relataError { _ = try Expression("Name = 'open") }
        #expect(string?.location == "column 8")

        let dangling = relataError { _ = try Expression("A = 1 AND") }
        #expect(dangling?.location == "column 10")

        let character = relataError { _ = try Expression("A # 1") }
        #expect(character?.location == "column 3")

        #expect(relataError { _ = try Expression("") }?.code == .expressionSyntax)
        #expect(relataError { _ = try Expression("A IS 5") }?.code == .expressionSyntax)
        let multiline = relataError { _ = try Expression("A = 1\nAND (B") }
        #expect(multiline?.location == "line 2, column 7")
    }

    @Test func unknownFieldsParametersAndFunctions() throws {
        let clients = try makeClients()
        let field = relataError { _ = try clients.rows(where: "ClientNam = 'x'") }
        #expect(field?.code == .unknownField)
        #expect(field?.location == "column 1")
        #expect(field?.field == "ClientNam")
        let parameter = relataError { _ = try clients.rows(where: "ClientId = :id", parameters: ["ID": 1]) }
        #expect(parameter?.code == .expressionEvaluation)
        #expect(parameter?.message.contains(":id") == true)
        let function = relataError { _ = try clients.rows(where: "FOO(ClientId) = 1") }
        #expect(function?.code == .expressionSyntax)
        let arity = relataError { _ = try clients.rows(where: "UPPER(ClientName, 1) = 'A'") }
        #expect(arity?.message.contains("takes 1 arguments") == true)
    }

    @Test func evaluationErrorsNameTheRow() throws {
        let clients = try makeClients()
        let error = relataError { _ = try clients.rows(where: "ClientName > 5") }
        #expect(error?.code == .expressionEvaluation)
        #expect(error?.row == "row (ClientId=1)")
        let condition = relataError { _ = try clients.rows(where: "ClientId + 1") }
        #expect(condition?.message.contains("not TRUE or FALSE") == true)
    }

    @Test func filtersSeePendingValues() throws {
        let clients = try makeClients()
        try clients.rows[2].setValue(0.5, forKey: "ClientDiscount")
        try clients.rows[0].setValue(.null, forKey: "ClientDiscount")
        #expect(try clients.rows(where: "ClientDiscount > 0.2").map { $0["ClientName"] } == ["Initech"])
        #expect(try clients.rows(where: "ClientDiscount IS NULL").map { $0["ClientName"] } == ["Acme"])
        try clients.removeRow(clients.rows[1])
        #expect(try clients.rows(where: "ClientId > 0").count == 2, "deleted rows are not matched")
    }

    @Test func parsedExpressionsReportTheirNames() throws {
        let expression = try Expression("A > :x AND LOWER(B) LIKE :y")
        #expect(expression.parameterNames == ["x", "y"])
        #expect(expression.fieldNames == ["A", "B"])
    }
}

extension ExpressionTests {
    /// Arithmetic at the edges of Int64 gives a value or an error naming the expression, never a trap.
    @Test func integerEdgesNeverTrap() throws {
        let min = "(-9223372036854775807 - 1)"
        #expect(try names("\(min) / -1 > 0 AND ClientId = 1") == ["Acme"], "Int64.min / -1 is a double")
        #expect(try names("\(min) % -1 = 0 AND ClientId = 1") == ["Acme"])
        #expect(try names("ABS(\(min)) > 0 AND ClientId = 1") == ["Acme"])
        #expect(try names("SUBSTRING(ClientName, \(min), 2) = 'Ac'") == ["Acme"])
        #expect(try names("SUBSTRING(ClientName, 9223372036854775807) = ''") == ["Acme", "Globex", "Initech"])
        #expect(throws: RelataError.self) { try names("9223372036854775807 + 1 > 0") }
        #expect(throws: RelataError.self) { try names("-\(min) > 0") }
    }
}

extension ExpressionTests {
    /// Found by `Scripts/fuzz.sh expression`: 720 open parentheses overflowed the stack.
    @Test func deepNestingIsASyntaxErrorNotAStackOverflow() throws {
        for text in [String(repeating: "(", count: 720) + "1", String(repeating: "NOT ", count: 5000) + "TRUE",
                     String(repeating: "-", count: 5000) + "1", String(repeating: "ABS(", count: 300) + "1" + String(repeating: ")", count: 300),
                     Array(repeating: "ClientId", count: 2000).joined(separator: " + ") + " > 0"] {
            let error = #expect(throws: RelataError.self) { try Expression(text) }
            #expect(error?.code == .expressionSyntax)
            #expect(error?.message.contains("levels deep") == true || error?.message.contains("deep") == true, "\(error?.message.prefix(80) ?? "")")
        }
        let reasonable = "(" + Array(repeating: "ClientId", count: 100).joined(separator: " + ") + ") > 0"
        #expect(try names(reasonable) == ["Acme", "Globex", "Initech"])
    }
}
