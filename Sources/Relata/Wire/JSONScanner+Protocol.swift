import Foundation

// The protocol's JSON read from its bytes (``JSONScanner``): the pieces every message's reader
// uses — tagged values, lists, strings and numbers as the protocol asks for them, members read
// in any order and judged in one, and problems that say where they lie.

extension JSONScanner {
    /// Reads one protocol message with `read`, which must consume the whole document.
    ///
    /// - Throws: ``Failure`` saying where and what: a syntax error anywhere is the one reported
    ///   (with its byte offset), else the message's first problem (with its path).
    static func message<Message>(_ bytes: UnsafeBufferPointer<UInt8>, _ read: (inout JSONScanner) throws -> Message) throws -> Message {
        var scanner = JSONScanner(bytes)
        do {
            let message = try read(&scanner)
            try scanner.expectEnd()
            return message
        } catch let problem as JSONProblem {
            try JSONScanner.validate(bytes)   // a syntax error after the problem is the one to report
            throw JSONScanner.Failure(problem.description)
        }
    }

    // MARK: Values

    /// Field values by name: an object whose members are tagged values.
    /// A change's or an edit's values: an object of tagged values by field name, made by
    /// `builder` (a delta's changes share their names).
    mutating func fieldValues(depth: Int, _ kind: DeltaChange.ValuesKind, builder: inout FieldValuesBuilder) throws -> FieldValues {
        skipSpace()
        guard current == UInt8(ascii: "{") else { throw JSONProblem("expected an object of field values") }
        var names: [String] = [], values: [Value?] = []
        try object(depth: depth) { scanner, key in
            let field = try scanner.name(of: key)
            do {
                values.append(try scanner.taggedValue(depth: depth + 1))
                names.append(field)
            } catch let problem as JSONProblem {
                throw problem.inside(.member(field))
            }
        }
        return builder.make(kind, names: names, values: values)
    }

    mutating func values(depth: Int, capacity: Int) throws -> [String: Value] {
        skipSpace()
        guard current == UInt8(ascii: "{") else { throw JSONProblem("expected an object of field values") }
        var values: [String: Value] = [:]
        values.reserveCapacity(capacity)
        try object(depth: depth) { scanner, key in
            let field = try scanner.name(of: key)
            do {
                values[field] = try scanner.taggedValue(depth: depth + 1)
            } catch let problem as JSONProblem {
                throw problem.inside(.member(field))
            }
        }
        return values
    }

    /// A value in the tagged form: `null`, or an object with exactly one of the type keys.
    mutating func taggedValue(depth: Int) throws -> Value {
        skipSpace()
        if current == UInt8(ascii: "n") {
            try validateValue(depth: depth)
            return .null
        }
        let exactlyOne = JSONProblem("a value is null or an object with exactly one of the keys integer, double, decimal, boolean, string, date, guid, blob")
        guard current == UInt8(ascii: "{") else { throw exactlyOne }
        var members = 0
        var read: Result<Value, JSONProblem>?
        try object(depth: depth) { scanner, key in
            members += 1
            guard members == 1 else { return try scanner.validateValue(depth: depth + 1) }
            let start = scanner.index
            do {
                guard let tag = try Tag(scanner, key) else {
                    throw JSONProblem("'\(try scanner.name(of: key))' is not a value type (integer, double, decimal, boolean, string, date, guid, blob)")
                }
                do {
                    read = .success(try scanner.value(tagged: tag))
                } catch let problem as JSONProblem {
                    throw problem.inside(.member(try scanner.name(of: key)))
                }
            } catch let problem as JSONProblem {
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
            guard let text = try numberText(), let double = Double(text), double.isFinite else { throw JSONProblem("expected a finite number") }
            return .double(double)
        case .boolean:
            return .boolean(try boolean())
        case .string:
            return .string(try protocolString())
        case .guid:
            let text = try protocolString()
            guard let uuid = UUID(uuidString: text) else { throw JSONProblem("'\(text)' is not a GUID") }
            return .guid(uuid)
        case .date, .decimal, .blob:
            if tag == .date, let text = try numberText() {
                guard let seconds = Double(text), seconds.isFinite else { throw JSONProblem("'\(text)' is not a time") }
                return .date(Date(timeIntervalSince1970: seconds).roundedToMicroseconds)
            }
            let text = try protocolString()
            let type: DataType = tag == .decimal ? .decimal : tag == .date ? .dateTime : .blob
            do throws(CoercionFailure) {
                return try type.parse(text)
            } catch {
                throw JSONProblem(error.message)
            }
        }
    }

    // MARK: JSON's kinds, as the protocol asks for them

    mutating func list<Element>(depth: Int, _ element: (inout JSONScanner) throws -> Element) throws -> [Element] {
        skipSpace()
        guard current == UInt8(ascii: "[") else { throw JSONProblem("expected an array") }
        var result: [Element] = []
        try array(depth: depth) { scanner in
            do {
                result.append(try element(&scanner))
            } catch let problem as JSONProblem {
                throw problem.inside(.element(result.count))
            }
        }
        return result
    }

    mutating func boolean() throws -> Bool {
        skipSpace()
        switch current {
        case UInt8(ascii: "t"): try literal("true"); return true
        case UInt8(ascii: "f"): try literal("false"); return false
        default: throw JSONProblem("expected true or false")
        }
    }

    mutating func protocolString() throws -> String {
        skipSpace()
        guard current == UInt8(ascii: "\"") else { throw JSONProblem("expected a string") }
        return try string()
    }

    /// The value as one of an enumeration's raw values (`'upsert' is not insert, update or delete`).
    mutating func choice<Choice: RawRepresentable & CaseIterable>() throws -> Choice where Choice.RawValue == String {
        let text = try protocolString()
        guard let choice = Choice(rawValue: text) else {
            let names = Choice.allCases.map(\.rawValue)
            throw JSONProblem("'\(text)' is not \(names.dropLast().joined(separator: ", ")) or \(names.last ?? "")")
        }
        return choice
    }

    /// The number at `index` as written, or nil (nothing read) when the value there is not a number.
    mutating func numberText() throws -> String? {
        skipSpace()
        guard current == UInt8(ascii: "-") || (0x30...0x39).contains(current) else { return nil }
        return text(try number())
    }

    mutating func int64() throws -> Int64 {
        skipSpace()
        guard current == UInt8(ascii: "-") || (0x30...0x39).contains(current) else { throw JSONProblem("expected a whole number") }
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
            throw JSONProblem("\(written) is not a whole number that fits 64 bits")
        }
        return Int64(double)
    }

    mutating func integer() throws -> Int {
        Int(try int64())
    }

    /// Digits with an optional minus sign, at most 18 of them (so no overflow is possible).
    static func wholeNumber(_ text: Slice<UnsafeBufferPointer<UInt8>>) -> Int64? {
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
struct JSONSlot<Member> {
    let name: StaticString
    private var seen = false
    private var read: Result<Member, JSONProblem>?

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
        } catch let problem as JSONProblem {
            self.read = .failure(problem.inside(.name(name)))
            scanner.index = start
            try scanner.validateValue(depth: depth)
        }
    }

    func required() throws -> Member {
        guard let read else { throw JSONProblem("'\(name)' is missing") }
        return try read.get()
    }

    func optional() throws -> Member? {
        try read?.get()
    }
}

/// Something in a well-formed document that the protocol does not accept, and where it is
/// (`deltas[0].changes[3].type: 'upsert' is not insert, update or delete`).
struct JSONProblem: Error, CustomStringConvertible {
    enum Step {
        case name(StaticString)
        case member(String)
        case element(Int)
    }

    let what: String
    /// Where, innermost first: each level adds its own step as the problem leaves it.
    private var steps: [Step] = []

    init(_ what: String) { self.what = what }

    func inside(_ step: Step) -> JSONProblem {
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
