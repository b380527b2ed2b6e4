/// JavaScriptCore reports a syntax error's line but not its column; this finds
/// the column from the message: the token it names (`Unexpected token ')'`,
/// `Unexpected identifier 'x'`) at its first place on the line, or the line's
/// end for an unexpected end of script. An estimate, documented as such.
enum SyntaxErrorColumn {
    static func estimate(message: String, line: Int, in source: String, firstLine: Int) -> Int? {
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
        let index = line - firstLine
        guard lines.indices.contains(index) else { return nil }
        let text = lines[index]
        if message.contains("end of script") || message.contains("EOF") {
            return text.count + 1
        }
        guard let open = message.firstIndex(of: "'"), let close = message.lastIndex(of: "'"), open < close else { return nil }
        let token = message[message.index(after: open)..<close]
        guard !token.isEmpty, let found = text.range(of: token) else { return nil }
        return text.distance(from: text.startIndex, to: found.lowerBound) + 1
    }
}
