import Foundation

extension String {
    /// The text as a JavaScript (and TypeScript) string literal: JSON's quoting, which both read back
    /// as this text, whatever it holds (quotes, backslashes, line breaks, `*/`, U+2028).
    ///
    /// ```swift
    /// let key = "Unit Price".scriptLiteral   // the 12 characters "Unit Price", quotes included
    /// ```
    package var scriptLiteral: String {
        let data = (try? JSONSerialization.data(withJSONObject: [self])) ?? Data("[\"\"]".utf8)
        return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
    }
}
