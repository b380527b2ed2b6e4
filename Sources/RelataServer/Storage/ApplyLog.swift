import Foundation
import Relata

/// The batches a data server has answered, by ``Relata/ApplyId``, kept in the data's own database
/// (table `relata_applies`) and written in the apply's own transaction: a batch is stored and
/// its id recorded together, or neither is.
///
/// A repeated id (a client retrying after a lost answer) gets the recorded answer and applies
/// nothing. Ids are the user's: the same id from another user is another batch. An id is kept
/// for ``retention`` after its batch was answered; an id made longer ago than that and not found
/// is refused (``Relata/RelataError/Code/applyIdExpired``), since the server cannot tell whether
/// it applied the batch and forgot.
///
/// ```swift
/// let log = ApplyLog(storage: storage, retention: .seconds(30 * 86_400))
/// if let answer = try log.answer(for: apply, user: "ann", fingerprint: try DeltaFingerprint.of(deltas), of: deltas, now: Date(), in: connection) { … }
/// ```
final class ApplyLog: @unchecked Sendable {
    // @unchecked Sendable: the only mutable state, `nextPurge`, is read and written only while `lock` is held.
    /// The table's name in the database.
    static let table = "relata_applies"
    /// How long a batch's id and answer are kept after the answer.
    let retention: Duration
    private let storage: SQLStorage
    private let lock = NSLock()
    private var nextPurge = Date.distantPast

    init(storage: SQLStorage, retention: Duration) {
        self.storage = storage
        self.retention = retention
    }

    private static let user = FieldDefinition("user_name", .string)
    private static let id = FieldDefinition("apply_id", .string)
    private static let fingerprint = FieldDefinition("fingerprint", .string)
    private static let recordedAt = FieldDefinition("recorded_at", .integer)
    private static let answer = FieldDefinition("answer", .string)

    /// `CREATE TABLE IF NOT EXISTS relata_applies …`.
    static func createStatement(dialect: any SQLDialect) -> String {
        let columns = [user, id, fingerprint, recordedAt, answer].map { "\(dialect.quote($0.name)) \(dialect.columnType(of: $0)) NOT NULL" }
        return "CREATE TABLE IF NOT EXISTS \(dialect.quote(table)) (\(columns.joined(separator: ", ")), "
            + "PRIMARY KEY (\(dialect.quote(user.name)), \(dialect.quote(id.name))))"
    }

    /// The answer recorded for a batch, or nil when the id is new.
    ///
    /// - Parameters:
    ///   - fingerprint: the batch's ``Relata/DeltaFingerprint``, asked for only when the id was
    ///     recorded before (it may still be being made meanwhile).
    ///   - deltas: the batch, for a record an earlier server made (its fingerprint of another form).
    /// - Throws: ``Relata/RelataError/Code/applyIdReused`` when the id came with other changes;
    ///   ``Relata/RelataError/Code/applyIdExpired`` for an unknown id made longer ago than ``retention``.
    func answer(for apply: ApplyId, user: String, fingerprint: @autoclosure () throws -> String, of deltas: [Delta], now: Date, in connection: any SQLConnection) throws -> [Delta]? {
        let dialect = storage.dialect
        let sql = "SELECT \(dialect.quote(Self.fingerprint.name)), \(dialect.quote(Self.answer.name)) FROM \(dialect.quote(Self.table)) "
            + "WHERE \(dialect.quote(Self.user.name)) = \(dialect.placeholder(1)) AND \(dialect.quote(Self.id.name)) = \(dialect.placeholder(2))"
        guard let row = try connection.rows(sql, [.string(user), .string(apply.id)], reading: [Self.fingerprint, Self.answer]).first else {
            if apply.madeAt < Self.seconds(now) - retention.components.seconds {
                throw RelataError(.applyIdExpired, "the apply id \(apply.id) was made more than \(Self.days(retention)) ago, longer than this server keeps ids: "
                                  + "it cannot tell whether it applied these changes. Read the tables again to see what they hold, then apply what is missing as a new batch")
            }
            return nil
        }
        let recorded = row[0].stringValue ?? ""
        let same = recorded.hasPrefix(DeltaFingerprint.prefix) ? try recorded == fingerprint() : recorded == Self.textFingerprint(of: deltas)
        guard same else {
            throw RelataError(.applyIdReused, "the apply id \(apply.id) was sent before with other changes; each batch of changes needs an id of its own")
        }
        guard let text = row[1].stringValue else { throw SQLError(.other, "the recorded answer of apply \(apply.id) is not text") }
        if text.hasPrefix(Self.compactAnswer) { return try Self.answer(fromRecorded: text, batch: deltas, apply: apply) }
        guard text.hasPrefix(Self.binaryAnswer) else { return try DeltaJSON.decode(Array(text.utf8)) }   // an earlier server's record
        guard let bytes = Data(base64Encoded: String(text.dropFirst(Self.binaryAnswer.count))) else {
            throw SQLError(.other, "the recorded answer of apply \(apply.id) is not base64")
        }
        return try DeltaBinary.decode(bytes)
    }

    /// What begins a recorded answer in the binary form (``Relata/DeltaBinary``, base64): quicker
    /// to write than its JSON, and a little over half its size even as base64. Earlier servers recorded
    /// the JSON; this one records the compact form (``compactAnswer``), and reads all three.
    static let binaryAnswer = "relata-delta:"

    /// Records a batch's answer in the transaction that applied it (nothing when it is recorded
    /// already: a concurrent attempt of the same batch got there first).
    func record(_ apply: ApplyId, user: String, fingerprint: String, answer: [Delta], batch: [Delta], now: Date, in connection: any SQLConnection) throws {
        let dialect = storage.dialect
        let columns = [Self.user, Self.id, Self.fingerprint, Self.recordedAt, Self.answer].map { dialect.quote($0.name) }
        let sql = "INSERT INTO \(dialect.quote(Self.table)) (\(columns.joined(separator: ", "))) VALUES ("
            + (1...5).map(dialect.placeholder).joined(separator: ", ") + ")"
        let text = try Self.recordedText(of: answer, batch: batch)
        try connection.execute(sql, [.string(user), .string(apply.id), .string(fingerprint), .integer(Self.seconds(now)), .string(text)])
    }

    /// Forgets the batches answered longer ago than ``retention`` — at most once an hour, in an
    /// apply's transaction (a purge that fails fails that apply, which is then tried again).
    func purgeIfDue(now: Date, in connection: any SQLConnection) throws {
        let due = lock.withLock {
            guard now >= nextPurge else { return false }
            nextPurge = now.addingTimeInterval(3600)
            return true
        }
        guard due else { return }
        let dialect = storage.dialect
        try connection.execute("DELETE FROM \(dialect.quote(Self.table)) WHERE \(dialect.quote(Self.recordedAt.name)) < \(dialect.placeholder(1))",
                               [.integer(Self.seconds(now) - retention.components.seconds)])
    }

    /// The fingerprint earlier servers recorded (before ``Relata/DeltaFingerprint``): read only to
    /// compare a retried batch with such a record, kept for ``retention``.
    static func textFingerprint(of deltas: [Delta]) -> String {
        var text = ""
        func add(_ values: FieldValues) {
            for (key, value) in values.sorted(by: { $0.key < $1.key }) { text += "\(key)=\(String(reflecting: value));" }
            text += "|"
        }
        for delta in deltas.sorted(by: { $0.tableName.lowercased() < $1.tableName.lowercased() }) {
            text += "T:\(delta.tableName.lowercased())|"
            for change in delta.changes.sorted(by: { $0.changeId < $1.changeId }) {
                text += "C:\(change.changeId):\(change.type.rawValue)|"
                add(change.oldValues)
                add(change.newValues)
                for edit in change.edits ?? [] {
                    text += "E:\(edit.sequence):\(edit.kind.rawValue)|"
                    add(edit.values)
                }
            }
        }
        return SHA256.hex(of: Array(text.utf8))
    }

    private static func seconds(_ date: Date) -> Int64 { Int64(date.timeIntervalSince1970.rounded(.down)) }

    private static func days(_ duration: Duration) -> String {
        let days = duration.components.seconds / 86_400
        return days >= 1 ? "\(days) days" : "\(duration.components.seconds) seconds"
    }
}
