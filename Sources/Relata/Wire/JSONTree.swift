import Foundation

/// A JSON document read straight from its UTF-8 bytes, for the protocol's large messages
/// (deltas): Foundation's decoders spend microseconds on every keyed container, which for
/// a delta of 100,000 changes is seconds. Numbers keep their text, so the reader decides
/// exactly how each one is taken (an `Int64`, a `Double`, a decimal's digits).
///
/// ```swift
/// let tree = try JSONTree.parse(Array(#"{"deltas": []}"#.utf8))
/// ```
package enum JSONTree: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONTree])
    case object([(key: String, value: JSONTree)])

    package static func == (a: JSONTree, b: JSONTree) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case let (.bool(x), .bool(y)): return x == y
        case let (.number(x), .number(y)), let (.string(x), .string(y)): return x == y
        case let (.array(x), .array(y)): return x == y
        case let (.object(x), .object(y)): return x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: return false
        }
    }

    /// What went wrong, where: a byte offset, or a path such as `deltas[0].changes[3].type`.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
        package init(_ description: String) { self.description = description }
    }

    /// The deepest nesting accepted (a hostile document cannot exhaust the stack).
    package static let maxDepth = 256

    /// Parses a whole document.
    ///
    /// - Throws: ``Failure`` naming the byte offset of the first problem: bad syntax, invalid
    ///   UTF-8, nesting deeper than ``maxDepth``, text after the document.
    package static func parse(_ bytes: some Collection<UInt8>) throws(Failure) -> JSONTree {
        let array = Array(bytes)
        return try array.withUnsafeBufferPointer { buffer throws(Failure) -> JSONTree in
            var parser = Parser(bytes: buffer)
            let tree = try parser.value(depth: 0)
            parser.skipSpace()
            guard parser.index == buffer.count else { throw parser.failure("text follows the end of the document") }
            return tree
        }
    }

    private struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        func failure(_ what: String) -> Failure {
            Failure("the JSON is not valid at byte \(index): \(what)")
        }

        mutating func skipSpace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 { index += 1 }
        }

        mutating func value(depth: Int) throws(Failure) -> JSONTree {
            guard depth < JSONTree.maxDepth else { throw failure("nested deeper than \(JSONTree.maxDepth) levels") }
            skipSpace()
            guard index < bytes.count else { throw failure("the document ends where a value should be") }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                index += 1
                var members: [(key: String, value: JSONTree)] = []
                skipSpace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
                while true {
                    skipSpace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw failure("expected a member name in quotes") }
                    let key = try string()
                    skipSpace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure("expected ':' after a member name") }
                    index += 1
                    members.append((key, try value(depth: depth + 1)))
                    skipSpace()
                    guard index < bytes.count else { throw failure("the document ends inside an object") }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
                    throw failure("expected ',' or '}' in an object")
                }
            case UInt8(ascii: "["):
                index += 1
                var elements: [JSONTree] = []
                skipSpace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
                while true {
                    elements.append(try value(depth: depth + 1))
                    skipSpace()
                    guard index < bytes.count else { throw failure("the document ends inside an array") }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
                    throw failure("expected ',' or ']' in an array")
                }
            case UInt8(ascii: "\""):
                return .string(try string())
            case UInt8(ascii: "t"): return try literal("true", .bool(true))
            case UInt8(ascii: "f"): return try literal("false", .bool(false))
            case UInt8(ascii: "n"): return try literal("null", .null)
            default:
                return .number(try number())
            }
        }

        mutating func literal(_ word: StaticString, _ tree: JSONTree) throws(Failure) -> JSONTree {
            let count = word.utf8CodeUnitCount
            guard bytes.count - index >= count else { throw failure("unknown word") }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { throw failure("unknown word") }
            index += count
            return tree
        }

        /// A number as JSON writes it: `-? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?`.
        mutating func number() throws(Failure) -> String {
            let start = index
            func digits() -> Int {
                let first = index
                while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
                return index - first
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
            let integerStart = index
            guard digits() > 0 else { throw failure("expected a value") }
            if bytes[integerStart] == UInt8(ascii: "0"), index - integerStart > 1 { throw failure("a number has a leading zero") }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { throw failure("a number has no digits after its '.'") }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { throw failure("a number has no digits in its exponent") }
            }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        }

        /// A string, its escapes resolved; the opening quote is at `index`.
        mutating func string() throws(Failure) -> String {
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
                    return String(decoding: slice, as: UTF8.self)
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

        mutating func hex4() throws(Failure) -> UInt32 {
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
}

/// Writes JSON text into bytes, for the protocol's large messages.
package struct JSONWriter {
    package private(set) var bytes: [UInt8] = []

    package init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    package mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    package mutating func raw(_ text: String) { bytes.append(contentsOf: text.utf8) }

    /// A string in quotes, escaped as JSON requires (and `/` left alone).
    package mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case 0x0A: raw("\\n")
            case 0x0D: raw("\\r")
            case 0x09: raw("\\t")
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                raw("\\u00")
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
