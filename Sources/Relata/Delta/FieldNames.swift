import Synchronization

/// The names a ``FieldValues`` holds values for, in order, shared by every value set made
/// alike — all the changes a table's delta makes, all those one wire delta carries — so each
/// set stores only its values, and two sets with one list of names compare and read each
/// other by position, with no name hashed.
package final class FieldNames: Sendable {
    /// The names, each once.
    package let names: [String]
    /// Where each name is, for lists longer than a short scan.
    private let positions: [String: Int]?
    /// The list this one with one more name made last, for the next value set that adds it.
    private let lastExtension = Mutex<FieldNames?>(nil)

    /// The list of no names.
    package static let none = FieldNames(unique: [])

    /// A list of `names`, which must each be there once.
    package init(unique names: [String]) {
        self.names = names
        positions = names.count > Self.longestScanned ? Dictionary(names.enumerated().map { ($1, $0) }) { first, _ in first } : nil
    }

    /// Lists of up to this many names are searched by comparing each: quicker than hashing.
    private static let longestScanned = 8

    /// Where `name` is in ``names``, or nil.
    package func position(of name: String) -> Int? {
        if let positions { return positions[name] }
        for index in names.indices where names[index] == name { return index }
        return nil
    }

    /// The positions of ``names`` in the order of the names (ascending).
    package func positionsInNameOrder() -> [Int] {
        names.indices.sorted { names[$0] < names[$1] }
    }

    /// This list with `name` after its names.
    func adding(_ name: String) -> FieldNames {
        lastExtension.withLock { last in
            if let last, last.names.last == name { return last }
            let made = FieldNames(unique: names + [name])
            last = made
            return made
        }
    }
}
