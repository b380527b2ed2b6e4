import Foundation
import Testing

/// README.md's tour blocks must be the code of Examples/Tour/main.swift, which the package compiles.
@Suite struct ReadmeTourTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized

    /// `tour:begin NAME` … `tour:end` regions of the tour, dedented.
    static func regions() throws -> [String: String] {
        let source = try String(contentsOf: root.appendingPathComponent("Examples/Tour/main.swift"), encoding: .utf8)
        var result: [String: String] = [:]
        var current: (name: String, lines: [String])?
        for line in source.components(separatedBy: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("// tour:begin ") {
                current = (String(trimmed.dropFirst("// tour:begin ".count)), [])
            } else if trimmed == "// tour:end", let region = current {
                let indent = region.lines.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
                    .map { $0.prefix { $0 == " " }.count }.min() ?? 0
                result[region.name] = region.lines.map { String($0.dropFirst(min(indent, $0.count))) }.joined(separator: "\n")
                current = nil
            } else {
                current?.lines.append(line)
            }
        }
        return result
    }

    /// `<!-- tour: NAME -->` followed by a swift code block in the README.
    static func readmeBlocks() throws -> [String: String] {
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        var result: [String: String] = [:]
        let parts = readme.components(separatedBy: "<!-- tour: ").dropFirst()
        for part in parts {
            let name = String(part.prefix { $0 != " " })
            guard let start = part.range(of: "```swift\n"), let end = part.range(of: "\n```", range: start.upperBound..<part.endIndex) else { continue }
            result[name] = String(part[start.upperBound..<end.lowerBound])
        }
        return result
    }

    @Test func readmeShowsTheCompiledTour() throws {
        let regions = try Self.regions()
        let blocks = try Self.readmeBlocks()
        #expect(!regions.isEmpty)
        #expect(Set(blocks.keys) == Set(regions.keys), "every tour region appears in the README and no other")
        for (name, code) in regions {
            #expect(blocks[name] == code, "README block '\(name)' differs from Examples/Tour/main.swift")
        }
    }
}
