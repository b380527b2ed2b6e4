import ArgumentParser
import Foundation
import Logging

/// How `relata serve` writes its log to standard error: `text`, one readable line per event, or
/// `json`, one JSON object per line for a log collector.
enum LogFormat: String, CaseIterable, ExpressibleByArgument {
    case text, json
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// The log options of `relata serve`.
struct LogOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The least important events logged: trace, debug, info, notice, warning, error or critical.", valueName: "level"))
    var logLevel: Logger.Level = .info

    @Option(help: ArgumentHelp("How the log is written to standard error: text (a line per event) or json (an object per line).", valueName: "format"))
    var logFormat: LogFormat = .text

    /// Sends every logger of the process to standard error in the chosen format and level. Once per process.
    func bootstrap() {
        let level = logLevel, format = logFormat
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler = switch format {
            case .text: StreamLogHandler.standardError(label: label)
            case .json: JSONLogHandler(label: label)
            }
            handler.logLevel = level
            return handler
        }
    }
}

/// A log handler writing one JSON object per event and line to standard error:
/// `{"time":"2026-11-26T13:00:00.123Z","level":"info","label":"relata.server","message":"…","source":"RelataServer",…}`
/// with the event's metadata as members of their own (a name the handler uses itself gets a
/// `metadata.` prefix).
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    init(label: String) {
        self.label = label
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var object: [String: Any] = [:]
        var all = metadata
        if let provided = metadataProvider?.get() { all.merge(provided) { _, new in new } }
        if let more = event.metadata { all.merge(more) { _, new in new } }
        for (key, value) in all {
            object[Self.reserved.contains(key) ? "metadata.\(key)" : key] = Self.json(value)
        }
        object["time"] = Self.timestamp(Date())
        object["level"] = event.level.rawValue
        object["label"] = label
        object["message"] = event.message.description
        object["source"] = event.source
        guard var line = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        line.append(UInt8(ascii: "\n"))
        Self.output.write(line)
    }

    private static let reserved: Set<String> = ["time", "level", "label", "message", "source"]

    private static func json(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .string(let text): return text
        case .stringConvertible(let number as Int): return number
        case .stringConvertible(let number as Double): return number.isFinite ? number : number.description
        case .stringConvertible(let convertible): return convertible.description
        case .array(let values): return values.map(json)
        case .dictionary(let members): return members.mapValues(json)
        }
    }

    private static func timestamp(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }

    /// Lines from many threads, each written whole.
    private static let output = LineWriter()
}

/// Writes whole lines to standard error, one at a time.
private final class LineWriter: @unchecked Sendable {
    // @unchecked Sendable: the file handle is only written while `lock` is held.
    private let lock = NSLock()

    func write(_ line: Data) {
        lock.withLock { FileHandle.standardError.write(line) }
    }
}
