import Foundation
import Relata
import RelataTools
import Testing

/// The differential's scenarios as the browser column reads them
/// (`Clients/JavaScript/browser-tests/differential-corpus.json`): each scenario's user and edits,
/// written as an edits file writes them. The file is checked in so the browser tests need no
/// Swift; this test keeps it equal to the corpus here.
@Suite struct BrowserCorpusTests {
    static let file = PCTradeServer.packageRoot.appendingPathComponent("Clients/JavaScript/browser-tests/differential-corpus.json")

    @Test func theBrowserColumnReadsTheCorpusTheOtherColumnsRun() throws {
        let encoded = try Self.corpus()
        if ProcessInfo.processInfo.environment["RELATA_WRITE_CORPUS"] == "1" { try encoded.write(to: Self.file) }
        let checkedIn = try Data(contentsOf: Self.file)
        #expect(checkedIn == encoded, """
            \(Self.file.lastPathComponent) differs from DifferentialCorpus: write it again with
            RELATA_WRITE_CORPUS=1 swift test --filter theBrowserColumnReadsTheCorpusTheOtherColumnsRun
            """)
    }

    /// Every scenario whose edits JSON can hold; the others are listed with why.
    static func corpus() throws -> Data {
        struct Entry: Encodable { let name: String; let user: String; let edits: [Edit] }
        struct Corpus: Encodable { let generatedBy: String; let scenarios: [Entry]; let leftOut: [String: String] }
        var scenarios: [Entry] = []
        var leftOut: [String: String] = [:]
        for scenario in DifferentialCorpus.scenarios {
            do {
                _ = try JSONEncoder().encode(scenario.edits)
                scenarios.append(Entry(name: scenario.name, user: scenario.user, edits: scenario.edits))
            } catch {
                leftOut[scenario.name] = "an edits file cannot hold its values (JSON has no NaN or infinity)"
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(Corpus(generatedBy: "Tests/RelataRemoteTests/Differential/BrowserCorpus.swift", scenarios: scenarios, leftOut: leftOut)) + Data("\n".utf8)
    }
}
