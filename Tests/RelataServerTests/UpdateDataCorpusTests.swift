import Foundation
import Relata
import RelataTestSupport
import Testing

/// The UpdateData fuzz target's check (``UpdateDataHarness``, the same file) in every test run,
/// without its sanitized build of the whole server: over the committed corpus (and the inputs
/// fuzzing saved there), and over random programs. After every request the stored rows must be
/// the rows before with exactly the answer's resolved changes made.
@Suite(.timeLimit(.minutes(5))) struct UpdateDataCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/Corpus/update-data")

    @Test func theCommittedCorpusKeepsTheStoredRowsEqualToTheAnswers() async throws {
        let harness = try UpdateDataHarness()
        let files = try FileManager.default.contentsOfDirectory(at: Self.corpus, includingPropertiesForKeys: nil)
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        #expect(files.count >= 8, "the corpus is in Fuzz/Corpus/update-data")
        var applied = 0
        for file in files {
            guard let request = UpdateDataHarness.request(from: [UInt8](try Data(contentsOf: file))) else { continue }
            let problem = await harness.apply(request.deltas, apply: request.apply)
            #expect(problem == nil, "\(file.lastPathComponent): \(problem ?? "")")
            applied += 1
        }
        #expect(applied == files.count, "every committed input is a request")
    }

    /// Programs of random bytes, from a fixed seed: the same requests every run, thousands of
    /// them, against one service whose rows carry over from request to request.
    @Test func randomRequestsKeepTheStoredRowsEqualToTheAnswers() async throws {
        let harness = try UpdateDataHarness()
        var random = SeededGenerator(seed: 2026_11_27)
        var stored = try Self.rows(of: harness), requestsThatChangedRows = 0
        for index in 0..<1_000 {
            // Mostly one to three changes (a longer request is more often refused whole), now and then up to twelve.
            let changes = random.next() % 4 == 0 ? 1 + Int(random.next() % 12) : 1 + Int(random.next() % 3)
            let bytes = (0..<(5 * changes)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            // An input beginning with `{` is JSON, which random bytes seldom are.
            guard let request = UpdateDataHarness.request(from: bytes) else { continue }
            if let problem = await harness.apply(request.deltas, apply: request.apply) {
                Issue.record("request \(index) (\(bytes)): \(problem)")
                return
            }
            let now = try Self.rows(of: harness)
            if now != stored { requestsThatChangedRows += 1 }
            stored = now
        }
        // Not a check that passes by refusing everything: most random requests are refused (repeated
        // sequences, missing rows, refusing rules), yet dozens store something.
        #expect(requestsThatChangedRows >= 20, "\(requestsThatChangedRows) of 1,000 requests changed the stored rows")
    }

    private static func rows(of harness: UpdateDataHarness) throws -> [[String: Value]] {
        try harness.service.storedRows(of: "Clients") + harness.service.storedRows(of: "Orders")
    }
}
