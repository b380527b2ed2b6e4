import Hummingbird

/// The `Prefer` request header (RFC 7240), as far as the server honours it: an UpdateData
/// sent with `Prefer: return=minimal` is answered without each change's old and new values,
/// which the client already has (``Relata/DeltaJSON/encode(_:apply:minimal:)``); the answer
/// then carries `Preference-Applied: return=minimal`. Other preferences are ignored, as the
/// RFC asks.
enum PreferHeader {
    // HTTPFields.Element is swift-http-types' HTTPField, which Hummingbird does not export by name.
    static let name = HTTPFields.Element.Name("Prefer")!
    static let applied = HTTPFields.Element.Name("Preference-Applied")!
    static let minimalReturn = "return=minimal"

    /// Whether one of the `Prefer` fields asks for `return=minimal`: preferences are separated
    /// by commas, a preference's parameters follow a `;`, the name is any case, spaces may
    /// surround `=`, and the value may be quoted (`Prefer: respond-async, RETURN = "minimal"`).
    static func asksForMinimalReturn(_ fields: HTTPFields) -> Bool {
        fields[values: name].contains { value in
            value.split(separator: ",").contains { preference in
                let token = preference.prefix { $0 != ";" }
                guard let equals = token.firstIndex(of: "=") else { return false }
                let key = token[..<equals].trimmingBlanks, word = token[token.index(after: equals)...].trimmingBlanks
                let unquoted = word.count >= 2 && word.first == "\"" && word.last == "\"" ? word.dropFirst().dropLast() : word
                return key.lowercased() == "return" && unquoted.lowercased() == "minimal"
            }
        }
    }
}

private extension Substring {
    /// Without the spaces and tabs HTTP allows around a preference's parts.
    var trimmingBlanks: Substring {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !blank($0) }), let last = lastIndex(where: { !blank($0) }) else { return "" }
        return self[first...last]
    }
}
