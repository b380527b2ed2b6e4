import Foundation

/// JSON read straight from its UTF-8 bytes, for the protocol's large messages (deltas):
/// Foundation's decoders spend microseconds on every keyed container, and even a tree of
/// the document costs an allocation per node, which for a delta of 100,000 changes is
/// most of a second. A reader walks the bytes once with ``object(depth:_:)`` and
/// ``array(depth:_:)``, which check the syntax as they go, and builds only what it keeps;
/// ``validate(_:)`` is the same walk keeping nothing.
///
/// ```swift
/// try bytes.withUnsafeBufferPointer { try JSONScanner.validate($0) }
/// ```
package struct JSONScanner {
    /// What went wrong, where: a byte offset, or a path such as `deltas[0].changes[3].type`.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
        package init(_ description: String) { self.description = description }
    }

    /// The deepest nesting accepted (a hostile document cannot exhaust the stack).
    package static let maxDepth = 256

    let bytes: UnsafeBufferPointer<UInt8>
    /// The next byte to read.
    var index: Int

    init(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int = 0) {
        self.bytes = bytes
        self.index = index
    }

    /// Checks that bytes are one JSON document (RFC 8259) and nothing else.
    ///
    /// - Throws: ``Failure`` naming the byte offset of the first problem: bad syntax, invalid
    ///   UTF-8, nesting deeper than ``maxDepth``, text after the document.
    package static func validate(_ bytes: UnsafeBufferPointer<UInt8>) throws {
        var scanner = JSONScanner(bytes)
        try scanner.validateValue(depth: 0)
        try scanner.expectEnd()
    }

    func failure(_ what: String) -> Failure {
        Failure("the JSON is not valid at byte \(index): \(what)")
    }

    /// The byte at `index`, or 0 past the end (never a valid byte of JSON outside a string).
    var current: UInt8 { index < bytes.count ? bytes[index] : 0 }

    mutating func skipSpace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 { index += 1 }
    }

    /// Checks that nothing but space follows the document.
    mutating func expectEnd() throws {
        skipSpace()
        guard index == bytes.count else { throw failure("text follows the end of the document") }
    }

    /// Reads past the value at `index`, `depth` containers deep, checking it and keeping nothing.
    mutating func validateValue(depth: Int) throws {
        guard depth < JSONScanner.maxDepth else { throw failure("nested deeper than \(JSONScanner.maxDepth) levels") }
        skipSpace()
        guard index < bytes.count else { throw failure("the document ends where a value should be") }
        switch bytes[index] {
        case UInt8(ascii: "{"): try object(depth: depth) { scanner, _ in try scanner.validateValue(depth: depth + 1) }
        case UInt8(ascii: "["): try array(depth: depth) { scanner in try scanner.validateValue(depth: depth + 1) }
        case UInt8(ascii: "\""): _ = try string(keeping: false)
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        default: _ = try number()
        }
    }

    /// A member's name, as it lies in the bytes.
    struct MemberKey {
        /// The name's bytes between its quotes, escapes unresolved.
        let bytes: Range<Int>
        let escaped: Bool
    }

    /// Reads the object whose `{` is at `index`: `body` gets each member's key with the scanner
    /// just after its `:`, and must read the value whole (as `validateValue(depth: depth + 1)`
    /// would, checking it).
    mutating func object(depth: Int, _ body: (inout JSONScanner, MemberKey) throws -> Void) throws {
        index += 1
        skipSpace()
        if current == UInt8(ascii: "}") { index += 1; return }
        while true {
            skipSpace()
            guard current == UInt8(ascii: "\"") else { throw failure("expected a member name in quotes") }
            let start = index + 1
            _ = try string(keeping: false)
            let key = MemberKey(bytes: start..<index - 1, escaped: bytes[start..<index - 1].contains(UInt8(ascii: "\\")))
            skipSpace()
            guard current == UInt8(ascii: ":") else { throw failure("expected ':' after a member name") }
            index += 1
            try body(&self, key)
            skipSpace()
            guard index < bytes.count else { throw failure("the document ends inside an object") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return }
            throw failure("expected ',' or '}' in an object")
        }
    }

    /// Reads the array whose `[` is at `index`: `element` gets the scanner at each element and
    /// must read it whole (as `validateValue(depth: depth + 1)` would, checking it).
    mutating func array(depth: Int, _ element: (inout JSONScanner) throws -> Void) throws {
        index += 1
        skipSpace()
        if current == UInt8(ascii: "]") { index += 1; return }
        while true {
            try element(&self)
            skipSpace()
            guard index < bytes.count else { throw failure("the document ends inside an array") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return }
            throw failure("expected ',' or ']' in an array")
        }
    }

    /// A member's name as a string, its escapes resolved.
    func name(of key: MemberKey) throws -> String {
        guard key.escaped else { return String(decoding: UnsafeBufferPointer(rebasing: bytes[key.bytes]), as: UTF8.self) }
        var scanner = JSONScanner(bytes, at: key.bytes.lowerBound - 1)
        return try scanner.string()
    }

    /// Whether a member's name is `name` (compared byte by byte unless it holds escapes).
    func key(_ key: MemberKey, is name: StaticString) throws -> Bool {
        guard !key.escaped else { return try self.name(of: key) == String(describing: name) }
        guard key.bytes.count == name.utf8CodeUnitCount, let base = bytes.baseAddress else { return false }
        return memcmp(base + key.bytes.lowerBound, name.utf8Start, key.bytes.count) == 0
    }

    /// The text of bytes already read (a number, say).
    func text(_ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    mutating func literal(_ word: StaticString) throws(Failure) {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw failure("unknown word") }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { throw failure("unknown word") }
        index += count
    }

    /// A number as JSON writes it: `-? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?`; its bytes.
    mutating func number() throws(Failure) -> Range<Int> {
        let start = index
        func digits() -> Int {
            let first = index
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
            return index - first
        }
        if current == UInt8(ascii: "-") { index += 1 }
        let integerStart = index
        guard digits() > 0 else { throw failure("expected a value") }
        if bytes[integerStart] == UInt8(ascii: "0"), index - integerStart > 1 { throw failure("a number has a leading zero") }
        if current == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw failure("a number has no digits after its '.'") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { throw failure("a number has no digits in its exponent") }
        }
        return start..<index
    }

    /// A string, its escapes resolved; the opening quote is at `index`. Not `keeping` it, the
    /// string is only checked (and "" returned) unless it has escapes.
    mutating func string(keeping: Bool = true) throws(Failure) -> String {
        index += 1
        let start = index
        // The common case: no escapes, ASCII or valid UTF-8 — one copy.
        var ascii = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                guard ascii || String.isValidUTF8(slice) else { throw failure("a string is not valid UTF-8") }
                return keeping ? String(decoding: slice, as: UTF8.self) : ""
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw failure("a control character inside a string") }
            if byte >= 0x80 { ascii = false }
            index += 1
        }
        guard index < bytes.count else { throw failure("a string has no closing quote") }
        // Escapes: build the bytes.
        var utf8 = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                guard utf8.withUnsafeBufferPointer(String.isValidUTF8) else { throw failure("a string is not valid UTF-8") }
                return String(decoding: utf8, as: UTF8.self)
            }
            guard byte >= 0x20 else { throw failure("a control character inside a string") }
            guard byte == UInt8(ascii: "\\") else { utf8.append(byte); index += 1; continue }
            index += 1
            guard index < bytes.count else { break }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
            case UInt8(ascii: "b"): utf8.append(0x08)
            case UInt8(ascii: "f"): utf8.append(0x0C)
            case UInt8(ascii: "n"): utf8.append(0x0A)
            case UInt8(ascii: "r"): utf8.append(0x0D)
            case UInt8(ascii: "t"): utf8.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                        throw failure("a lone surrogate in a \\u escape")
                    }
                    index += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw failure("a lone surrogate in a \\u escape") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw failure("a lone surrogate in a \\u escape")
                }
                guard let unicode = Unicode.Scalar(scalar) else { throw failure("a \\u escape is not a character") }
                utf8.append(contentsOf: String(Character(unicode)).utf8)
            default:
                throw failure("unknown escape '\\\(Character(Unicode.Scalar(escape)))'")
            }
        }
        throw failure("a string has no closing quote")
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard bytes.count - index >= 4 else { throw failure("a \\u escape needs four hex digits") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case 0x30...0x39: digit = UInt32(byte - 0x30)
            case 0x41...0x46: digit = UInt32(byte - 0x41 + 10)
            case 0x61...0x66: digit = UInt32(byte - 0x61 + 10)
            default: throw failure("a \\u escape needs four hex digits")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }
}
