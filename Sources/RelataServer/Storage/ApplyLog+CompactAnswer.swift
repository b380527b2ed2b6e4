import Foundation
import Relata

/// A recorded answer leaves out what the batch itself carries: a change's old and new values and
/// its edits, where they are those of the batch's change it answers (same table, same id, the
/// same bit for bit: ``Relata/WireIdentity``). A retry is the same batch, as its fingerprint
/// proves, so it puts them back, and gets the answer the first attempt got. A large apply's
/// record is then about the size of its outcome, not of its values twice over.
///
/// The text: ``compactAnswer``, the answer in the binary form (base64), a dot, then two bits per
/// change in the answer's order (base64): values left out, edits left out.
///
/// ```swift
/// let text = try ApplyLog.recordedText(of: answer, batch: deltas)
/// let answer = try ApplyLog.answer(fromRecorded: text, batch: deltas, apply: apply)
/// ```
extension ApplyLog {
    /// What begins a recorded answer in this form.
    static let compactAnswer = "relata-delta-compact:"

    static func recordedText(of answer: [Delta], batch: [Delta]) throws -> String {
        var leftOut = LeftOutBits(changes: answer)
        forEachAnsweredChange(of: answer, in: batch) { delta, change, sent, ordinal in
            guard let sent else { return }
            // Read in place: the changes are compared, not copied.
            var answered: DeltaChange { answer[delta].changes[change] }
            var carried: DeltaChange { batch[sent.delta].changes[sent.change] }
            if WireIdentity.same(answered.oldValues, carried.oldValues), WireIdentity.same(answered.newValues, carried.newValues) {
                leftOut.insert(.values, at: ordinal)
            }
            if answered.edits != nil, WireIdentity.same(answered.edits, carried.edits) { leftOut.insert(.edits, at: ordinal) }
        }
        let bytes = try DeltaBinary.encode(answer) { delta, change in leftOut[leftOut.ordinal(delta, change)] }
        return compactAnswer + bytes.base64EncodedString() + "." + Data(leftOut.bytes).base64EncodedString()
    }

    /// The answer a text of ``recordedText(of:batch:)`` holds, with what it left out put back from `batch`.
    /// - Throws: ``SQLError`` for a text this form cannot hold, or one that leaves out a change the batch does not carry.
    static func answer(fromRecorded text: String, batch: [Delta], apply: ApplyId) throws -> [Delta] {
        let body = text.dropFirst(compactAnswer.count)
        guard let dot = body.firstIndex(of: "."), let bytes = Data(base64Encoded: String(body[..<dot])),
              let bits = Data(base64Encoded: String(body[body.index(after: dot)...])) else {
            throw SQLError(.other, "the recorded answer of apply \(apply.id) is not in the compact form it claims")
        }
        var answer = try DeltaBinary.decode(bytes)
        let leftOut = LeftOutBits(changes: answer, bytes: Array(bits))
        guard let leftOut else { throw SQLError(.other, "the recorded answer of apply \(apply.id) has too few bits for its changes") }
        // Where each change left out comes from, found first: the answer is changed after.
        var putBack: [(delta: Int, change: Int, sent: (delta: Int, change: Int), parts: DeltaBinary.LeftOut)] = []
        var missing: (table: String, change: Int)?
        forEachAnsweredChange(of: answer, in: batch, answeredOnly: false) { delta, change, sent, ordinal in
            let parts = leftOut[ordinal]
            guard !parts.isEmpty else { return }
            guard let sent else {
                missing = missing ?? (answer[delta].tableName, answer[delta].changes[change].changeId)
                return
            }
            putBack.append((delta, change, sent, parts))
        }
        if let missing {
            throw SQLError(.other, "the recorded answer of apply \(apply.id) leaves out change \(missing.change) of \(missing.table), which the batch does not carry")
        }
        for (delta, change, sent, parts) in putBack {
            if parts.contains(.values) {
                answer[delta].changes[change].oldValues = batch[sent.delta].changes[sent.change].oldValues
                answer[delta].changes[change].newValues = batch[sent.delta].changes[sent.change].newValues
            }
            if parts.contains(.edits) { answer[delta].changes[change].edits = batch[sent.delta].changes[sent.change].edits }
        }
        return answer
    }

    /// Calls `body` with each change of `answer` (its delta's and its own position, where it is
    /// in the batch, and its ordinal among the answer's changes): only those the batch carries
    /// unless `answeredOnly` is false. The batch's deltas are found by table name (any case: a
    /// request has one delta per table), its changes by id.
    private static func forEachAnsweredChange(of answer: [Delta], in batch: [Delta], answeredOnly: Bool = true,
                                              _ body: (_ delta: Int, _ change: Int, _ sent: (delta: Int, change: Int)?, _ ordinal: Int) -> Void) {
        let batchByTable = Dictionary(batch.indices.map { (batch[$0].tableName.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        var ordinal = 0
        for delta in answer.indices {
            let sentDelta = batchByTable[answer[delta].tableName.lowercased()]
            var positions = sentDelta.map { SentChangePositions(of: batch[$0]) }
            for change in answer[delta].changes.indices {
                defer { ordinal += 1 }
                let sent = sentDelta.flatMap { sentDelta in
                    positions?.position(of: answer[delta].changes[change].changeId, near: change).map { (sentDelta, $0) }
                }
                if sent != nil || !answeredOnly { body(delta, change, sent, ordinal) }
            }
        }
    }
}

/// Two bits per change of an answer, in its order: what its record leaves out.
private struct LeftOutBits {
    private(set) var bytes: [UInt8]
    /// Where each delta's first change is among the answer's changes.
    private let firsts: [Int]

    init(changes answer: [Delta]) {
        var firsts: [Int] = [], count = 0
        for delta in answer {
            firsts.append(count)
            count += delta.changes.count
        }
        self.firsts = firsts
        bytes = [UInt8](repeating: 0, count: (2 * count + 7) / 8)
    }

    /// The bits read back; nil when there are fewer than the answer's changes need.
    init?(changes answer: [Delta], bytes: [UInt8]) {
        self.init(changes: answer)
        guard bytes.count >= self.bytes.count else { return nil }
        self.bytes = bytes
    }

    func ordinal(_ delta: Int, _ change: Int) -> Int { firsts[delta] + change }

    subscript(ordinal: Int) -> DeltaBinary.LeftOut {
        DeltaBinary.LeftOut(rawValue: (bytes[ordinal / 4] >> UInt8(2 * (ordinal % 4))) & 0b11)
    }

    mutating func insert(_ parts: DeltaBinary.LeftOut, at ordinal: Int) {
        bytes[ordinal / 4] |= parts.rawValue << UInt8(2 * (ordinal % 4))
    }
}
