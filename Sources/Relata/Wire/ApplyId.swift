import Foundation

/// The identity of one batch of changes sent to a data server, made once by the client and
/// sent with every attempt to apply that batch (`UpdateData`): the server applies a batch once,
/// and answers a repeated id with the answer it gave the first time.
///
/// A client makes an id when it sends a batch, and keeps it with the batch until an answer
/// comes — across its own retries and, in a briefcase, across app restarts. ``madeAt`` lets
/// the server tell an id it has forgotten (kept longer than it keeps ids) from one it never saw.
///
/// ```swift
/// let apply = ApplyId()                                   // a new UUID, made now
/// let body = try DeltaJSON.encode([try orders.makeDelta()], apply: apply)
/// ```
public struct ApplyId: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The id: 1 to 128 characters of letters, digits, `-`, `_`, `.` and `:` (a UUID by default).
    public let id: String
    /// When the client made the id, in whole seconds since 1970.
    public let madeAt: Int64

    /// The most characters an id may have.
    public static let maximumLength = 128

    /// A new id: a random UUID, made now.
    public init() {
        id = UUID().uuidString
        madeAt = Int64(Date().timeIntervalSince1970.rounded(.down))
    }

    /// An id read from a request or a file.
    ///
    /// - Throws: ``RelataError/Code/invalidArgument`` for an empty or longer id, one with
    ///   other characters, or a time before 1970.
    public init(id: String, madeAt: Int64) throws {
        guard !id.isEmpty, id.utf8.count <= Self.maximumLength,
              id.utf8.allSatisfy({ Self.allowed.contains($0) }) else {
            throw RelataError(.invalidArgument, "an apply id is 1 to \(Self.maximumLength) characters of letters, digits, '-', '_', '.' and ':', not \(String(reflecting: String(id.prefix(40))))")
        }
        guard madeAt >= 0 else { throw RelataError(.invalidArgument, "an apply id's madeAt is seconds since 1970, not \(madeAt)") }
        self.id = id
        self.madeAt = madeAt
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        do {
            try self.init(id: container.decode(String.self, forKey: .id), madeAt: container.decode(Int64.self, forKey: .madeAt))
        } catch let error as RelataError {
            throw DecodingError.dataCorruptedError(forKey: .id, in: container, debugDescription: error.message)
        }
    }

    public var description: String { id }

    private static let allowed: Set<UInt8> = Set(Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.:".utf8))
}
