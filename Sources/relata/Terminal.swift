import Foundation

/// Standard output and error, and a progress bar drawn only on a terminal.
enum Terminal {
    static let errorIsTerminal = isatty(STDERR_FILENO) != 0

    static func print(_ text: String) {
        Swift.print(text)
    }

    /// A line written at once, unbuffered, for programs that wait for it (a server saying where it listens).
    static func printNow(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// JSON for machines: pretty-printed, keys sorted, slashes as they are.
    static func json(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    static func printJSON(_ value: some Encodable) throws {
        print(String(decoding: try json(value), as: UTF8.self))
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data("relata: error: \(text)\n".utf8))
    }

    static func writeError(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}

/// `[######······] 12/40 Orders.test.js` on standard error, redrawn in place, when
/// standard error is a terminal and the work is long enough to be worth it; nothing otherwise.
final class ProgressBar {
    private let total: Int
    private var done = 0
    private let enabled: Bool
    private let width = 24

    init(total: Int, minimum: Int = 20) {
        self.total = total
        enabled = Terminal.errorIsTerminal && total >= minimum
    }

    func advance(_ label: String = "") {
        done += 1
        guard enabled else { return }
        let filled = total == 0 ? width : done * width / total
        let bar = String(repeating: "#", count: filled) + String(repeating: "·", count: width - filled)
        Terminal.writeError("\r\u{1B}[2K[\(bar)] \(done)/\(total) \(label.prefix(40))")
    }

    func finish() {
        if enabled { Terminal.writeError("\r\u{1B}[2K") }
    }
}
