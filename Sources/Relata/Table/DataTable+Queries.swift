import Foundation

/// How string values are compared when sorting.
public enum SortComparison: Sendable, Hashable {
    /// Unicode code-point order, case-sensitive ("Zebra" before "apple"), like SQLite's
    /// BINARY collation; the fastest.
    case standard
    /// Localized and case-insensitive ("apple" beside "Apple").
    case localizedCaseInsensitive
    /// Like the Finder: localized, case-insensitive and numeric-aware ("File 2" before "File 10").
    case finderStyle
}

/// Filtering and sorting. Every method returns the table's own row objects and
/// leaves the table's content unchanged. Filters and sorts see posted values:
/// edits in progress (see ``DataTableRow/edit()``) are not visible until posted.
extension DataTable {
    /// The visible rows for which an expression is true, in table order.
    ///
    /// ```swift
    /// let good = try clients.rows(where: "ClientDiscount >= :min AND ClientName LIKE 'A%'",
    ///                             parameters: ["min": 0.1])
    /// ```
    /// - Throws: ``RelataError/Code/expressionSyntax`` with the column of a syntax
    ///   error, ``RelataError/Code/unknownField``, or ``RelataError/Code/expressionEvaluation``
    ///   naming the row where evaluation failed.
    public func rows(where expression: String, parameters: [String: Value] = [:]) throws -> [DataTableRow] {
        try rows(where: Expression(expression), parameters: parameters)
    }

    /// The visible rows for which a parsed expression is true, in table order.
    public func rows(where expression: Expression, parameters: [String: Value] = [:]) throws -> [DataTableRow] {
        rows(atSlots: try matchingSlots(expression, parameters: parameters))
    }

    /// The visible rows for which a Swift predicate is true, in table order.
    ///
    /// ```swift
    /// let named = clients.rows { !$0["ClientName"].isNull }
    /// ```
    public func rows(where predicate: (DataTableRow) throws -> Bool) rethrows -> [DataTableRow] {
        try visibleSlots.lazy.map(row(atSlot:)).filter(predicate)
    }

    /// The visible rows sorted by a field (stored, calculated or lookup). NULL sorts first
    /// in ascending order; ties keep table order.
    ///
    /// ```swift
    /// let byName = try clients.rows(sortedBy: "ClientName")
    /// let byFile = try documents.rows(sortedBy: "FileName", using: .finderStyle)
    /// ```
    public func rows(sortedBy field: String, ascending: Bool = true,
                     using comparison: SortComparison = .standard) throws -> [DataTableRow] {
        rows(atSlots: try sorted(visibleSlots, by: field, ascending: ascending, using: comparison))
    }

    /// The visible rows for which an expression is true, sorted by a field.
    ///
    /// ```swift
    /// let rows = try clients.rows(where: "ClientDiscount > 0", sortedBy: "ClientName",
    ///                             using: .localizedCaseInsensitive)
    /// ```
    public func rows(where expression: String, parameters: [String: Value] = [:], sortedBy field: String,
                     ascending: Bool = true, using comparison: SortComparison = .standard) throws -> [DataTableRow] {
        let slots = try matchingSlots(Expression(expression), parameters: parameters)
        return rows(atSlots: try sorted(slots, by: field, ascending: ascending, using: comparison))
    }

    // MARK: Implementation

    func matchingSlots(_ expression: Expression, parameters: [String: Value]) throws -> [Int] {
        let compiler = ExpressionCompiler(table: self, parameters: parameters, text: expression.text)
        let condition = try compiler.condition(expression.root)
        var result: [Int] = []
        var current = 0
        do {
            if hiddenCount == 0 {
                for slot in 0..<slotCount {
                    current = slot
                    if try condition(slot) == .yes { result.append(slot) }
                }
            } else {
                for slot in visibleSlots {
                    current = slot
                    if try condition(slot) == .yes { result.append(slot) }
                }
            }
        } catch let failure as EvaluationFailure {
            throw RelataError(.expressionEvaluation, "\(failure.message) in \"\(expression.text)\"", table: name,
                              row: rowLabel(slot: current),
                              location: ExpressionParser.location(of: failure.offset, in: expression.text))
        }
        return result
    }

    func sorted(_ slots: [Int], by fieldName: String, ascending: Bool, using comparison: SortComparison) throws -> [Int] {
        if let field = fieldIndex(named: fieldName), comparison == .standard || fields[field].type.storage != .string {
            if let fast = fastSorted(slots, field: field, ascending: ascending) { return fast }
        }
        let keys: [Value]
        if let field = fieldIndex(named: fieldName) {
            keys = slots.map { postedValue(slot: $0, field: field) }
        } else {
            keys = try values(ofField: fieldName, slots: slots)
        }
        let order = Array(keys.indices).sorted { a, b in
            let result = Self.order(keys[a], keys[b], comparison)
            if result == .orderedSame { return a < b }
            return (result == .orderedAscending) == ascending
        }
        return order.map { slots[$0] }
    }

    /// Sorts by a stored Int, Double, String or Date column through its typed buffer.
    private func fastSorted(_ slots: [Int], field: Int, ascending: Bool) -> [Int]? {
        switch columns[field] {
        case .integer(let column): return typedSorted(slots, column, field, ascending)
        case .double(let column): return typedSorted(slots, column, field, ascending)
        case .string(let column): return stringSorted(slots, column, field, ascending)
        case .date(let column): return typedSorted(slots, column, field, ascending)
        default: return nil
        }
    }

    private func typedSorted<E: Comparable & ColumnElement>(_ slots: [Int], _ column: TypedColumn<E>, _ field: Int,
                                                            _ ascending: Bool) -> [Int] {
        let dirty = self.dirty
        var nullSlots: [Int] = []
        var keyed: [(key: E, slot: Int)] = []
        keyed.reserveCapacity(slots.count)
        for slot in slots {
            if dirty[slot] == 0 {
                if let element = column.element(at: slot) { keyed.append((element, slot)) } else { nullSlots.append(slot) }
            } else if let element = E(columnValue: postedValue(slot: slot, field: field)) {
                keyed.append((element, slot))
            } else {
                nullSlots.append(slot)
            }
        }
        if ascending {
            keyed.sort { $0.key < $1.key || ($0.key == $1.key && $0.slot < $1.slot) }
            return nullSlots + keyed.map(\.slot)
        }
        keyed.sort { $0.key > $1.key || ($0.key == $1.key && $0.slot < $1.slot) }
        return keyed.map(\.slot) + nullSlots
    }

    /// Sorts by a stored string column in code-point order. Each string's first
    /// 16 UTF-8 bytes become two integers, so most comparisons are integer
    /// comparisons; only equal prefixes compare the whole strings.
    private func stringSorted(_ slots: [Int], _ column: TypedColumn<String>, _ field: Int, _ ascending: Bool) -> [Int] {
        struct Entry {
            var high: UInt64
            var low: UInt64
            var index: Int
        }
        let dirty = self.dirty
        var nullSlots: [Int] = []
        var strings: [String] = []
        var stringSlots: [Int] = []
        var entries: [Entry] = []
        strings.reserveCapacity(slots.count)
        stringSlots.reserveCapacity(slots.count)
        entries.reserveCapacity(slots.count)
        for slot in slots {
            let element = dirty[slot] == 0 ? column.element(at: slot) : postedValue(slot: slot, field: field).stringValue
            guard let string = element else {
                nullSlots.append(slot)
                continue
            }
            var high: UInt64 = 0, low: UInt64 = 0, count = 0
            for byte in string.utf8 {
                if count < 8 { high |= UInt64(byte) << (56 - 8 * count) } else { low |= UInt64(byte) << (56 - 8 * (count - 8)) }
                count += 1
                if count == 16 { break }
            }
            entries.append(Entry(high: high, low: low, index: strings.count))
            strings.append(string)
            stringSlots.append(slot)
        }
        func precedes(_ a: Entry, _ b: Entry) -> Bool {
            if a.high != b.high { return a.high < b.high }
            if a.low != b.low { return a.low < b.low }
            switch Value.codePointOrder(strings[a.index], strings[b.index]) {
            case .orderedAscending: return true
            case .orderedDescending: return false
            case .orderedSame: return a.index < b.index
            }
        }
        if ascending {
            entries.sort(by: precedes)
        } else {
            entries.sort { a, b in
                if a.high != b.high { return a.high > b.high }
                if a.low != b.low { return a.low > b.low }
                switch Value.codePointOrder(strings[a.index], strings[b.index]) {
                case .orderedAscending: return false
                case .orderedDescending: return true
                case .orderedSame: return a.index < b.index
                }
            }
        }
        let ordered = entries.map { stringSlots[$0.index] }
        return ascending ? nullSlots + ordered : ordered + nullSlots
    }

    /// The total order used by sorting: NULL first, then by value.
    static func order(_ left: Value, _ right: Value, _ comparison: SortComparison) -> ComparisonResult {
        switch (left, right) {
        case (.null, .null): return .orderedSame
        case (.null, _): return .orderedAscending
        case (_, .null): return .orderedDescending
        case let (.string(a), .string(b)) where comparison != .standard:
            return comparison == .finderStyle ? a.localizedStandardCompare(b) : a.localizedCaseInsensitiveCompare(b)
        default:
            return ((try? Value.compare(left, right)) ?? nil) ?? left.kindName.compare(right.kindName)
        }
    }
}
