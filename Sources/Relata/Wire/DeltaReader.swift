import Foundation

/// Reads UpdateData's JSON (``DeltaJSON``) from its bytes in one pass, checking the syntax as
/// it goes and building only the deltas.
///
/// The answer does not depend on where problems lie: a syntax error anywhere is the one
/// reported (with its byte offset); otherwise an object's members are judged in a fixed order
/// once all are read, arrays element by element, so a document with several problems always
/// reports the same one. The first of two members with one name counts, and a member whose
/// value is `null` is absent — except in field values (`oldValues` and its siblings), where
/// the last of two equal names counts, as for a dictionary built member by member.
enum DeltaReader {
    /// Reads an UpdateData request: its apply id when it has one, and its deltas.
    ///
    /// - Throws: ``JSONScanner/Failure`` saying where and what.
    static func request(_ bytes: UnsafeBufferPointer<UInt8>) throws -> (apply: ApplyId?, deltas: [Delta]) {
        var scanner = JSONScanner(bytes)
        do {
            let request = try scanner.request()
            try scanner.expectEnd()
            return request
        } catch let problem as Problem {
            try JSONScanner.validate(bytes)   // a syntax error after the problem is the one to report
            throw JSONScanner.Failure(problem.description)
        }
    }
}

// MARK: - The protocol's objects

extension JSONScanner {
    fileprivate mutating func request() throws -> (apply: ApplyId?, deltas: [Delta]) {
        skipSpace()
        guard current == UInt8(ascii: "{") else { throw Problem("expected an object") }
        var apply = Slot<ApplyId>("apply"), deltas = Slot<[Delta]>("deltas")
        try object(depth: 0) { scanner, key in
            if try scanner.key(key, is: "apply") {
                try apply.fill(&scanner, depth: 1) { try $0.applyId(depth: 1) }
            } else if try scanner.key(key, is: "deltas") {
                try deltas.fill(&scanner, depth: 1) { try $0.list(depth: 1) { try $0.delta(depth: 2) } }
            } else {
                try scanner.validateValue(depth: 1)
            }
        }
        return (try apply.optional(), try deltas.required())
    }

    private mutating func applyId(depth: Int) throws -> ApplyId {
        skipSpace()
        guard current == UInt8(ascii: "{") else { throw Problem("expected an object") }
        var id = Slot<String>("id"), madeAt = Slot<Int64>("madeAt")
        try object(depth: depth) { scanner, key in
            if try scanner.key(key, is: "id") {
                try id.fill(&scanner, depth: depth + 1) { try $0.protocolString() }
            } else if try scanner.key(key, is: "madeAt") {
                try madeAt.fill(&scanner, depth: depth + 1) { try $0.int64() }
            } else {
                try scanner.validateValue(depth: depth + 1)
            }
        }
        let (idText, madeAtSeconds) = (try id.required(), try madeAt.required())
        do {
            return try ApplyId(id: idText, madeAt: madeAtSeconds)
        } catch let error as RelataError {
            throw Problem(error.message)
        }
    }

    private mutating func delta(depth: Int) throws -> Delta {
        skipSpace()
        guard current == UInt8(ascii: "{") else { throw Problem("expected an object") }
        var tableName = Slot<String>("tableName"), keyFields = Slot<[String]>("keyFields")
        var loggedFields = Slot<[String]>("loggedFields"), changes = Slot<[DeltaChange]>("changes")
        var width = 0
        try object(depth: depth) { scanner, key in
            let inner = depth + 1
            if try scanner.key(key, is: "tableName") {
                try tableName.fill(&scanner, depth: inner) { try $0.protocolString() }
            } else if try scanner.key(key, is: "keyFields") {
                try keyFields.fill(&scanner, depth: inner) { try $0.list(depth: inner) { try $0.protocolString() } }
            } else if try scanner.key(key, is: "loggedFields") {
                try loggedFields.fill(&scanner, depth: inner) { try $0.list(depth: inner) { try $0.protocolString() } }
            } else if try scanner.key(key, is: "changes") {
                try changes.fill(&scanner, depth: inner) { try $0.list(depth: inner) { try $0.change(depth: inner + 1, width: &width) } }
            } else {
                try scanner.validateValue(depth: inner)
            }
        }
        return Delta(tableName: try tableName.required(), keyFields: try keyFields.required(),
                     loggedFields: try loggedFields.required(), changes: try changes.required())
    }

    /// A change; `width` is how many values the changes before it held, to size its dictionaries.
    private mutating func change(depth: Int, width: inout Int) throws -> DeltaChange {
        skipSpace()
        guard current == UInt8(ascii: "{") else { throw Problem("expected an object") }
        var changeId = Slot<Int>("changeId"), type = Slot<DeltaChange.ChangeType>("type"), status = Slot<DeltaChange.Status>("status")
        var oldValues = Slot<[String: Value]>("oldValues"), newValues = Slot<[String: Value]>("newValues")
        var refreshedValues = Slot<[String: Value]>("refreshedValues"), message = Slot<String>("message")
        var failure = Slot<ChangeFailure>("failure"), edits = Slot<[RowEdit]>("edits")
        let capacity = width
        try object(depth: depth) { scanner, key in
            let inner = depth + 1
            if try scanner.key(key, is: "changeId") {
                try changeId.fill(&scanner, depth: inner) { try $0.integer() }
            } else if try scanner.key(key, is: "type") {
                try type.fill(&scanner, depth: inner) { try $0.choice() }
            } else if try scanner.key(key, is: "status") {
                try status.fill(&scanner, depth: inner) { try $0.choice() }
            } else if try scanner.key(key, is: "oldValues") {
                try oldValues.fill(&scanner, depth: inner) { try $0.values(depth: inner, capacity: capacity) }
            } else if try scanner.key(key, is: "newValues") {
                try newValues.fill(&scanner, depth: inner) { try $0.values(depth: inner, capacity: capacity) }
            } else if try scanner.key(key, is: "refreshedValues") {
                try refreshedValues.fill(&scanner, depth: inner) { try $0.values(depth: inner, capacity: 0) }
            } else if try scanner.key(key, is: "message") {
                try message.fill(&scanner, depth: inner) { try $0.protocolString() }
            } else if try scanner.key(key, is: "failure") {
                try failure.fill(&scanner, depth: inner) { try $0.changeFailure(depth: inner) }
            } else if try scanner.key(key, is: "edits") {
                try edits.fill(&scanner, depth: inner) { try $0.list(depth: inner) { try $0.edit(depth: inner + 1) } }
            } else {
                try scanner.validateValue(depth: inner)
            }
        }
        let (changeType, changeStatus, id) = (try type.required(), try status.required(), try changeId.required())
        let (old, new) = (try oldValues.required(), try newValues.required())
        width = max(old.count, new.count)
        return DeltaChange(changeId: id, type: changeType, oldValues: old, newValues: new, status: changeStatus,
                           message: try message.optional(), failure: try failure.optional(),
                           refreshedValues: try refreshedValues.required(), edits: try edits.optional())
    }

    private mutating func edit(depth: Int) throws -> RowEdit {
        skipSpace()
        guard current == UInt8(ascii: "{") else { throw Problem("expected an object") }
        var kind = Slot<RowEdit.Kind>("kind"), sequence = Slot<Int>("sequence"), values = Slot<[String: Value]>("values")
        try object(depth: depth) { scanner, key in
            if try scanner.key(key, is: "kind") {
                try kind.fill(&scanner, depth: depth + 1) { try $0.choice() }
            } else if try scanner.key(key, is: "sequence") {
                try sequence.fill(&scanner, depth: depth + 1) { scanner in
                    let sequence = try scanner.integer()
                    guard sequence > 0 else { throw Problem("an edit's sequence is a positive number, not \(sequence)") }
                    return sequence
                }
            } else if try scanner.key(key, is: "values") {
                try values.fill(&scanner, depth: depth + 1) { try $0.values(depth: depth + 1, capacity: 0) }
            } else {
                try scanner.validateValue(depth: depth + 1)
            }
        }
        let editKind = try kind.required()
        return RowEdit(sequence: Int64(try sequence.required()), kind: editKind, values: try values.optional() ?? [:])
    }

    private mutating func changeFailure(depth: Int) throws -> ChangeFailure {
        skipSpace()
        guard current == UInt8(ascii: "{") else { throw Problem("expected an object") }
        var kind = Slot<FailureKind>("kind"), message = Slot<String>("message")
        var texts = [Slot<String>("event"), Slot<String>("table"), Slot<String>("row"), Slot<String>("file")]
        var numbers = [Slot<Int>("line"), Slot<Int>("column")]
        try object(depth: depth) { scanner, key in
            let inner = depth + 1
            if try scanner.key(key, is: "kind") {
                try kind.fill(&scanner, depth: inner) { scanner in
                    let text = try scanner.protocolString()
                    guard let kind = FailureKind(rawValue: text) else {
                        throw Problem("'\(text)' is not a failure kind (\(FailureKind.allCases.map(\.rawValue).joined(separator: ", ")))")
                    }
                    return kind
                }
            } else if try scanner.key(key, is: "message") {
                try message.fill(&scanner, depth: inner) { try $0.protocolString() }
            } else if let index = try texts.firstIndex(where: { try scanner.key(key, is: $0.name) }) {
                try texts[index].fill(&scanner, depth: inner) { try $0.protocolString() }
            } else if let index = try numbers.firstIndex(where: { try scanner.key(key, is: $0.name) }) {
                try numbers[index].fill(&scanner, depth: inner) { try $0.integer() }
            } else {
                try scanner.validateValue(depth: inner)
            }
        }
        let failureKind = try kind.required()
        return ChangeFailure(failureKind, try message.required(), event: try texts[0].optional(), table: try texts[1].optional(),
                             row: try texts[2].optional(), file: try texts[3].optional(),
                             line: try numbers[0].optional(), column: try numbers[1].optional())
    }

    // MARK: Values

    /// Field values by name: an object whose members are tagged values.
    private mutating func values(depth: Int, capacity: Int) throws -> [String: Value] {
        skipSpace()
        guard current == UInt8(ascii: "{") else { throw Problem("expected an object of field values") }
        var values: [String: Value] = [:]
        values.reserveCapacity(capacity)
        try object(depth: depth) { scanner, key in
            let field = try scanner.name(of: key)
            do {
                values[field] = try scanner.taggedValue(depth: depth + 1)
            } catch let problem as Problem {
                throw problem.inside(.member(field))
            }
        }
        return values
    }

    /// A value in the tagged form: `null`, or an object with exactly one of the type keys.
    private mutating func taggedValue(depth: Int) throws -> Value {
        skipSpace()
        if current == UInt8(ascii: "n") {
            try validateValue(depth: depth)
            return .null
        }
        let exactlyOne = Problem("a value is null or an object with exactly one of the keys integer, double, decimal, boolean, string, date, guid, blob")
        guard current == UInt8(ascii: "{") else { throw exactlyOne }
        var members = 0
        var read: Result<Value, Problem>?
        try object(depth: depth) { scanner, key in
            members += 1
            guard members == 1 else { return try scanner.validateValue(depth: depth + 1) }
            let start = scanner.index
            do {
                guard let tag = try Tag(scanner, key) else {
                    throw Problem("'\(try scanner.name(of: key))' is not a value type (integer, double, decimal, boolean, string, date, guid, blob)")
                }
                do {
                    read = .success(try scanner.value(tagged: tag))
                } catch let problem as Problem {
                    throw problem.inside(.member(try scanner.name(of: key)))
                }
            } catch let problem as Problem {
                read = .failure(problem)
                scanner.index = start
                try scanner.validateValue(depth: depth + 1)
            }
        }
        guard members == 1, let read else { throw exactlyOne }
        return try read.get()
    }

    /// The value after a type key.
    private mutating func value(tagged tag: Tag) throws -> Value {
        skipSpace()
        switch tag {
        case .integer:
            return .integer(try int64())
        case .double:
            guard let text = try numberText(), let double = Double(text), double.isFinite else { throw Problem("expected a finite number") }
            return .double(double)
        case .boolean:
            switch current {
            case UInt8(ascii: "t"): try literal("true"); return .boolean(true)
            case UInt8(ascii: "f"): try literal("false"); return .boolean(false)
            default: throw Problem("expected true or false")
            }
        case .string:
            return .string(try protocolString())
        case .guid:
            let text = try protocolString()
            guard let uuid = UUID(uuidString: text) else { throw Problem("'\(text)' is not a GUID") }
            return .guid(uuid)
        case .date, .decimal, .blob:
            if tag == .date, let text = try numberText() {
                guard let seconds = Double(text), seconds.isFinite else { throw Problem("'\(text)' is not a time") }
                return .date(Date(timeIntervalSince1970: seconds).roundedToMicroseconds)
            }
            let text = try protocolString()
            let type: DataType = tag == .decimal ? .decimal : tag == .date ? .dateTime : .blob
            do throws(CoercionFailure) {
                return try type.parse(text)
            } catch {
                throw Problem(error.message)
            }
        }
    }

    // MARK: JSON's kinds, as the protocol asks for them

    private mutating func list<Element>(depth: Int, _ element: (inout JSONScanner) throws -> Element) throws -> [Element] {
        skipSpace()
        guard current == UInt8(ascii: "[") else { throw Problem("expected an array") }
        var result: [Element] = []
        try array(depth: depth) { scanner in
            do {
                result.append(try element(&scanner))
            } catch let problem as Problem {
                throw problem.inside(.element(result.count))
            }
        }
        return result
    }

    private mutating func protocolString() throws -> String {
        skipSpace()
        guard current == UInt8(ascii: "\"") else { throw Problem("expected a string") }
        return try string()
    }

    /// The value as one of an enumeration's raw values (`'upsert' is not insert, update or delete`).
    private mutating func choice<Choice: RawRepresentable & CaseIterable>() throws -> Choice where Choice.RawValue == String {
        let text = try protocolString()
        guard let choice = Choice(rawValue: text) else {
            let names = Choice.allCases.map(\.rawValue)
            throw Problem("'\(text)' is not \(names.dropLast().joined(separator: ", ")) or \(names.last ?? "")")
        }
        return choice
    }

    /// The number at `index` as written, or nil (nothing read) when the value there is not a number.
    private mutating func numberText() throws -> String? {
        skipSpace()
        guard current == UInt8(ascii: "-") || (0x30...0x39).contains(current) else { return nil }
        return text(try number())
    }

    private mutating func int64() throws -> Int64 {
        skipSpace()
        guard current == UInt8(ascii: "-") || (0x30...0x39).contains(current) else { throw Problem("expected a whole number") }
        let range = try number()
        if let integer = Self.wholeNumber(bytes[range]) { return integer }
        let written = text(range)
        if let integer = Int64(written) { return integer }
        // 7.0 or 7e2 are whole numbers too, when they are exactly so (the digits, not their
        // nearest double: -9223372036854775809 is not -2⁶³).
        let fractionOrExponent = bytes[range].contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
        guard fractionOrExponent, let double = Double(written), double.rounded() == double,
              double >= -9.223372036854775808e18, double < 9.223372036854775808e18,
              Decimal(string: written) == Decimal(Int64(double)) else {
            throw Problem("\(written) is not a whole number that fits 64 bits")
        }
        return Int64(double)
    }

    private mutating func integer() throws -> Int {
        Int(try int64())
    }

    /// Digits with an optional minus sign, at most 18 of them (so no overflow is possible).
    private static func wholeNumber(_ text: Slice<UnsafeBufferPointer<UInt8>>) -> Int64? {
        var digits = text[...]
        let negative = digits.first == UInt8(ascii: "-")
        if negative { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.count <= 18 else { return nil }
        var value: Int64 = 0
        for byte in digits {
            guard (0x30...0x39).contains(byte) else { return nil }
            value = value * 10 + Int64(byte - 0x30)
        }
        return negative ? -value : value
    }
}

// MARK: - Reading members in any order, judging them in one

/// A value's type key.
private enum Tag {
    case integer, double, decimal, boolean, string, date, guid, blob

    private static let names: [(StaticString, Tag)] = [("integer", .integer), ("string", .string), ("double", .double),
                                                       ("boolean", .boolean), ("date", .date), ("decimal", .decimal),
                                                       ("guid", .guid), ("blob", .blob)]

    /// The type a key names, or nil for a key that names none.
    init?(_ scanner: JSONScanner, _ key: JSONScanner.MemberKey) throws {
        for (name, tag) in Self.names where try scanner.key(key, is: name) {
            self = tag
            return
        }
        return nil
    }
}

/// What one member of an object said: read as it comes, judged when the object is complete.
private struct Slot<Member> {
    let name: StaticString
    private var seen = false
    private var read: Result<Member, Problem>?

    init(_ name: StaticString) { self.name = name }

    /// Reads the member's value with `read`, the first time the member appears and unless it
    /// is `null`; a problem is kept (the value is read past, checking it) for `required` or
    /// `optional` to report.
    mutating func fill(_ scanner: inout JSONScanner, depth: Int, _ read: (inout JSONScanner) throws -> Member) throws {
        guard !seen else { return try scanner.validateValue(depth: depth) }
        seen = true
        scanner.skipSpace()
        guard scanner.current != UInt8(ascii: "n") else { return try scanner.validateValue(depth: depth) }
        let start = scanner.index
        do {
            self.read = .success(try read(&scanner))
        } catch let problem as Problem {
            self.read = .failure(problem.inside(.name(name)))
            scanner.index = start
            try scanner.validateValue(depth: depth)
        }
    }

    func required() throws -> Member {
        guard let read else { throw Problem("'\(name)' is missing") }
        return try read.get()
    }

    func optional() throws -> Member? {
        try read?.get()
    }
}

/// Something in a well-formed document that the protocol does not accept, and where it is
/// (`deltas[0].changes[3].type: 'upsert' is not insert, update or delete`).
private struct Problem: Error, CustomStringConvertible {
    enum Step {
        case name(StaticString)
        case member(String)
        case element(Int)
    }

    let what: String
    /// Where, innermost first: each level adds its own step as the problem leaves it.
    private var steps: [Step] = []

    init(_ what: String) { self.what = what }

    func inside(_ step: Step) -> Problem {
        var outer = self
        outer.steps.append(step)
        return outer
    }

    var description: String {
        var path = ""
        for step in steps.reversed() {
            switch step {
            case .name(let name): path += path.isEmpty ? "\(name)" : ".\(name)"
            case .member(let key): path += path.isEmpty ? key : "." + key
            case .element(let index): path += "[\(index)]"
            }
        }
        return "\(path.isEmpty ? "the body" : path): \(what)"
    }
}
