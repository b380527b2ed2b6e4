import Foundation

extension String {
    /// The text without the spaces and tabs at its ends (`CharacterSet.whitespaces`). Text with
    /// neither end blank — nearly every value a database gives back — is returned as it is,
    /// without Foundation's trimming, which costs more than parsing a date.
    ///
    /// ```swift
    /// " 2024-03-01 ".trimmingBlanks   // "2024-03-01"
    /// ```
    var trimmingBlanks: String {
        guard let first = unicodeScalars.first, let last = unicodeScalars.last else { return self }
        func isBlank(_ scalar: Unicode.Scalar) -> Bool {
            scalar.isASCII ? scalar == " " || scalar == "\t" : CharacterSet.whitespaces.contains(scalar)
        }
        return isBlank(first) || isBlank(last) ? trimmingCharacters(in: .whitespaces) : self
    }
}
