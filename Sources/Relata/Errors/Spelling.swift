/// Telling a misspelt name from the name meant: keys in files, event handlers in scripts,
/// tables and fields in queries.
package enum Spelling {
    /// The name nearest to a misspelt one (case-insensitively), when at most a third of its letters are off.
    ///
    /// ```swift
    /// Spelling.closest(to: "scirpt", among: ["script", "data"])   // "script"
    /// ```
    package static func closest(to name: String, among known: [String]) -> String? {
        let folded = name.lowercased()
        guard folded.count <= 200 else { return nil }   // no misspelling is that long; the work grows with the square
        var best: (name: String, distance: Int)?
        for candidate in known.sorted() {
            let apart = distance(folded, candidate.lowercased())
            if apart < (best?.distance ?? Int.max) { best = (candidate, apart) }
        }
        guard let best, best.distance <= max(1, folded.count / 3) else { return nil }
        return best.name
    }

    /// Edits between two names: insertions, deletions, substitutions, and a swap of two neighbours counted as one.
    package static func distance(_ first: String, _ second: String) -> Int {
        let a = Array(first), b = Array(second)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + [Int](repeating: 0, count: b.count)
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { current[j] = min(current[j], previous2[j - 2] + 1) }
            }
            previous2 = previous
            previous = current
        }
        return previous[b.count]
    }
}
