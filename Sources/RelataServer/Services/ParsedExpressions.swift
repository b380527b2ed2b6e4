import Relata
import Synchronization

/// Where expressions already parsed, by their text: a client reading rows by key sends the same
/// text with new parameters every time, and parsing it again was a few per cent of a one-row read.
///
/// Bounded, since the texts come from clients: at most ``capacity`` texts of at most
/// ``maxTextBytes`` bytes each are kept, and a full cache starts over. A text that does not parse
/// is never kept (its error is made again each time, naming the column).
///
/// ```swift
/// let expressions = ParsedExpressions()
/// let byKey = try expressions.parse("ClientId = :id")   // parsed
/// let again = try expressions.parse("ClientId = :id")   // kept: the same expression
/// ```
final class ParsedExpressions: Sendable {
    /// The most texts kept at once.
    let capacity: Int
    /// The longest text kept, in UTF-8 bytes; longer ones are parsed every time.
    static let maxTextBytes = 1024
    private let kept = Mutex<[String: Relata.Expression]>([:])

    init(capacity: Int = 512) {
        self.capacity = max(1, capacity)
    }

    /// The expression a text says, parsed once while it is kept.
    ///
    /// - Throws: ``Relata/RelataError/Code/expressionSyntax``, as ``Relata/Expression/init(_:)`` does.
    func parse(_ text: String) throws -> Relata.Expression {
        if let known = kept.withLock({ $0[text] }) { return known }
        let expression = try Relata.Expression(text)
        guard text.utf8.count <= Self.maxTextBytes else { return expression }
        kept.withLock { kept in
            if kept.count >= capacity { kept.removeAll(keepingCapacity: true) }
            kept[text] = expression
        }
        return expression
    }

    /// How many texts are kept now.
    var count: Int { kept.withLock { $0.count } }
}
