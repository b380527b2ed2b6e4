/// Finds, in a rule script's text, its top-level function declarations and the
/// places it calls `fail(…)` — what a coverage report lists. A light scanner,
/// not a parser: it skips strings, template literals, comments and regular
/// expression literals, and tracks brace depth.
package struct ScriptScanner {
    package struct Function: Equatable, Sendable {
        package let name: String
        package let line: Int
    }

    struct Call: Equatable, Sendable {
        let line: Int
        let column: Int
    }

    package private(set) var functions: [Function] = []
    private(set) var failCalls: [Call] = []

    package init(_ source: String) {
        let bytes = Array(source.utf8)
        var index = 0, line = 1, lineStart = 0, depth = 0
        // The last two words and the last significant character, to tell `fail(` calls from
        // `x.fail(` and `function fail(`, and a regular expression from a division.
        var previousWord = "", lastSignificant: UInt8 = UInt8(ascii: ";")
        // Whether the last `function` keyword began a statement at the top level (a declaration).
        var declares = false
        // Whether a line ended since the last significant character (a statement may end there).
        var newLine = true
        func isWordByte(_ byte: UInt8) -> Bool {
            (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122) || byte == 95 || byte == 36 || byte >= 128
        }
        func skipToEnd(of quote: UInt8) {
            index += 1
            while index < bytes.count && bytes[index] != quote {
                if bytes[index] == UInt8(ascii: "\\") { index += 1 }
                else if bytes[index] == 10 { line += 1; lineStart = index + 1 }
                index += 1
            }
            index += 1
        }
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case 10:
                newLine = true
                line += 1
                lineStart = index + 1
                index += 1
            case UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "`"):
                skipToEnd(of: byte)
                lastSignificant = UInt8(ascii: "a")
                newLine = false
            case UInt8(ascii: "/") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "/"):
                while index < bytes.count && bytes[index] != 10 { index += 1 }
            case UInt8(ascii: "/") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "*"):
                index += 2
                while index + 1 < bytes.count && !(bytes[index] == UInt8(ascii: "*") && bytes[index + 1] == UInt8(ascii: "/")) {
                    if bytes[index] == 10 { line += 1; lineStart = index + 1 }
                    index += 1
                }
                index += 2
            case UInt8(ascii: "/") where !isWordByte(lastSignificant) && lastSignificant != UInt8(ascii: ")")
                && lastSignificant != UInt8(ascii: "]") || previousWord == "return" && lastSignificant == UInt8(ascii: "n"):
                skipToEnd(of: UInt8(ascii: "/"))   // a regular expression literal
                while index < bytes.count && isWordByte(bytes[index]) { index += 1 }   // its flags
                lastSignificant = UInt8(ascii: "a")
                newLine = false
            case _ where isWordByte(byte):
                let start = index
                while index < bytes.count && isWordByte(bytes[index]) { index += 1 }
                let word = String(decoding: bytes[start..<index], as: UTF8.self)
                var next = index
                while next < bytes.count && (bytes[next] == 32 || bytes[next] == 9) { next += 1 }
                let calls = next < bytes.count && bytes[next] == UInt8(ascii: "(")
                if word == "function" {
                    declares = depth == 0 && (newLine || [UInt8(ascii: ";"), UInt8(ascii: "}"), UInt8(ascii: "{")].contains(lastSignificant))
                }
                if previousWord == "function" && declares {
                    functions.append(Function(name: word, line: line))
                }
                if word == "fail" && calls && previousWord != "function" && lastSignificant != UInt8(ascii: ".") {
                    failCalls.append(Call(line: line, column: start - lineStart + 1))
                }
                previousWord = word
                lastSignificant = bytes[index - 1]
                newLine = false
            default:
                if byte == UInt8(ascii: "{") { depth += 1 }
                if byte == UInt8(ascii: "}") { depth = max(depth - 1, 0) }
                if byte != 32 && byte != 9 && byte != 13 {
                    lastSignificant = byte
                    newLine = false
                    previousWord = ""
                }
                index += 1
            }
        }
    }
}
