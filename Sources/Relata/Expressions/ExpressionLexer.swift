/// A token of the expression language, with its position in the text.
struct ExpressionToken: Equatable {
    enum Kind: Equatable {
        case number(Value)
        case string(String)
        case identifier(String, quoted: Bool)
        case parameter(String)
        case symbol(String)
        case end
    }
    let kind: Kind
    let offset: Int
}

/// Splits expression text into tokens.
struct ExpressionLexer {
    private let characters: [Character]
    private let text: String
    private let grammar: ExpressionGrammar
    private var position = 0

    init(text: String, grammar: ExpressionGrammar = .expression) {
        self.text = text
        self.characters = Array(text)
        self.grammar = grammar
    }

    mutating func tokens() throws -> [ExpressionToken] {
        var result: [ExpressionToken] = []
        while true {
            let token = try next()
            result.append(token)
            if token.kind == .end { return result }
        }
    }

    private mutating func next() throws -> ExpressionToken {
        try skipSpaceAndComments()
        let start = position
        guard position < characters.count else { return ExpressionToken(kind: .end, offset: start) }
        let character = characters[position]
        if character.isNumber || (character == "." && peek(1)?.isNumber == true) {
            return ExpressionToken(kind: .number(try number()), offset: start)
        }
        if character == "'" {
            return ExpressionToken(kind: .string(try quoted(until: "'", what: "string")), offset: start)
        }
        if character == "\"" {
            return ExpressionToken(kind: .identifier(try quoted(until: "\"", what: "quoted field name"), quoted: true), offset: start)
        }
        if character == "[" {
            position += 1
            let nameStart = position
            while position < characters.count, characters[position] != "]" { position += 1 }
            guard position < characters.count else { throw syntaxError("the field name in [brackets] is not closed", at: start) }
            let name = String(characters[nameStart..<position])
            position += 1
            return ExpressionToken(kind: .identifier(name, quoted: true), offset: start)
        }
        if character == ":" {
            position += 1
            let name = identifierText()
            guard !name.isEmpty else { throw syntaxError("expected a parameter name after ':'", at: start) }
            return ExpressionToken(kind: .parameter(name), offset: start)
        }
        if character.isLetter || character == "_" {
            return ExpressionToken(kind: .identifier(identifierText(), quoted: false), offset: start)
        }
        for symbol in ["<>", "!=", "<=", ">=", "==", "||"] where matches(symbol) {
            position += 2
            return ExpressionToken(kind: .symbol(symbol), offset: start)
        }
        if "=<>+-*/%(),.;".contains(character) {
            position += 1
            return ExpressionToken(kind: .symbol(String(character)), offset: start)
        }
        throw syntaxError("unexpected character '\(character)'", at: start)
    }

    /// Whitespace, and in DA SQL `-- to the end of the line` and `/* … */` comments.
    private mutating func skipSpaceAndComments() throws {
        while position < characters.count {
            if characters[position].isWhitespace {
                position += 1
            } else if grammar == .query, matches("--") {
                while position < characters.count, characters[position] != "\n" { position += 1 }
            } else if grammar == .query, matches("/*") {
                let start = position
                position += 2
                while position < characters.count, !matches("*/") { position += 1 }
                guard position < characters.count else { throw syntaxError("the comment that starts here is not closed (add */)", at: start) }
                position += 2
            } else {
                return
            }
        }
    }

    private func peek(_ distance: Int) -> Character? {
        position + distance < characters.count ? characters[position + distance] : nil
    }

    private func matches(_ symbol: String) -> Bool {
        let symbolCharacters = Array(symbol)
        guard position + symbolCharacters.count <= characters.count else { return false }
        return Array(characters[position..<position + symbolCharacters.count]) == symbolCharacters
    }

    private mutating func identifierText() -> String {
        let start = position
        while position < characters.count, characters[position].isLetter || characters[position].isNumber || characters[position] == "_" {
            position += 1
        }
        return String(characters[start..<position])
    }

    private mutating func number() throws -> Value {
        let start = position
        var isInteger = true
        while position < characters.count, characters[position].isNumber { position += 1 }
        if position < characters.count, characters[position] == "." {
            isInteger = false
            position += 1
            while position < characters.count, characters[position].isNumber { position += 1 }
        }
        if position < characters.count, characters[position] == "e" || characters[position] == "E" {
            isInteger = false
            position += 1
            if position < characters.count, characters[position] == "+" || characters[position] == "-" { position += 1 }
            while position < characters.count, characters[position].isNumber { position += 1 }
        }
        let text = String(characters[start..<position])
        if isInteger, let integer = Int64(text) { return .integer(integer) }
        guard let double = Double(text) else { throw syntaxError("'\(text)' is not a number", at: start) }
        return .double(double)
    }

    private mutating func quoted(until quote: Character, what: String) throws -> String {
        let start = position
        position += 1
        var result = ""
        while position < characters.count {
            let character = characters[position]
            position += 1
            if character == quote {
                if position < characters.count, characters[position] == quote {
                    result.append(quote)
                    position += 1
                } else {
                    return result
                }
            } else {
                result.append(character)
            }
        }
        throw syntaxError("the \(what) that starts here is not closed (add \(quote))", at: start)
    }

    func syntaxError(_ message: String, at offset: Int) -> RelataError {
        ExpressionParser.syntaxError(message, at: offset, in: text, grammar: grammar)
    }
}
