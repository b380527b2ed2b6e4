import Foundation
import Relata

/// One row of the benchmark table, as plain Swift (the floor).
struct ClientRecord {
    var id: Int64
    var name: String
    var city: String
    var balance: Double
    var since: Date
    var active: Bool
}

/// A deterministic table of `count` rows with 6 mixed fields.
struct Dataset {
    let records: [ClientRecord]

    static let fields = [
        FieldDefinition("Id", .largeInt, primaryKey: true),
        FieldDefinition("Name", .string, size: 40),
        FieldDefinition("City", .string, size: 30),
        FieldDefinition("Balance", .float),
        FieldDefinition("Since", .dateTime),
        FieldDefinition("Active", .boolean),
    ]

    init(count: Int) {
        var generator = SplitMix(seed: 42)
        let first = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Ken", "Dennis", "Margaret", "Linus",
                     "Guido", "Bjarne", "John", "Niklaus", "Frances", "Radia"]
        let cities = ["Austin", "Berlin", "Cairo", "Delhi", "Espoo", "Fresno", "Geneva", "Hanoi", "Izmir", "Jakarta",
                      "Kyoto", "Lagos", "Madrid", "Nairobi", "Oslo", "Porto", "Quito", "Riga", "Sofia", "Tunis"]
        records = (0..<count).map { index in
            ClientRecord(
                id: Int64(index + 1),
                name: "\(first[Int(generator.next() % 16)]) \(generator.next() % 100_000)",
                city: cities[Int(generator.next() % 20)],
                balance: Double(generator.next() % 1_000_000) / 100,
                since: Date(timeIntervalSince1970: 946_684_800 + Double(generator.next() % 700_000_000)),
                active: generator.next() % 4 != 0)
        }
    }

    /// The bytes of the values themselves: 8 + name + city + 8 + 8 + 1 per row.
    var rawPayloadBytes: Int {
        records.reduce(0) { $0 + 25 + $1.name.utf8.count + $1.city.utf8.count }
    }

    var relataRows: some Sequence<[Value]> {
        records.lazy.map { [.integer($0.id), .string($0.name), .string($0.city), .double($0.balance), .date($0.since), .boolean($0.active)] }
    }
}

/// A small, fast, deterministic generator.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
