import RelataScript
import Relata
/// Checks a rule script without running it (`relata check`): its syntax, and
/// functions whose name is close to an event handler's but not quite (a
/// misspelled handler never runs, silently).
///
/// ```swift
/// for problem in ScriptCheck.check(RuleScript(contentsOf: url), engine: engine) {
///     print(problem)   // rules/Orders.js:12:5: error: SyntaxError: Unexpected token ')'
/// }
/// ```
public enum ScriptCheck {
    /// Every event a script can handle.
    public static let eventNames = RuleEvent.allCases.map(\.handlerName)

    /// One problem in a script.
    public struct Diagnostic: Codable, Sendable, Equatable, CustomStringConvertible {
        public enum Severity: String, Codable, Sendable { case error, warning }
        public var severity: Severity
        public var file: String
        public var line: Int?
        public var column: Int?
        public var message: String
        /// What the problem is in: a script (its syntax or top level), or a file a script cannot fix
        /// (a schema, data or edits file).
        public var kind: Kind

        public enum Kind: String, Codable, Sendable { case script, file }

        public init(severity: Severity, file: String, line: Int? = nil, column: Int? = nil, message: String, kind: Kind = .script) {
            self.severity = severity
            self.file = file
            self.line = line
            self.column = column
            self.message = message
            self.kind = kind
        }

        /// `file:line:column: severity: message`, as compilers print it.
        public var description: String {
            let place = [file, line.map(String.init), column.map(String.init)].compactMap { $0 }.joined(separator: ":")
            return "\(place): \(severity.rawValue): \(message)"
        }
    }

    public static func check(_ script: RuleScript, engine: ScriptEngine) -> [Diagnostic] {
        do {
            try engine.checkSyntax(script.source, fileName: script.fileName)
        } catch let error as ScriptError {
            return [Diagnostic(severity: .error, file: error.file ?? script.fileName, line: error.line, column: error.column,
                               message: error.message)]
        } catch {
            return [Diagnostic(severity: .error, file: script.fileName, message: "\(error)")]
        }
        return ScriptScanner(script.source).functions.compactMap { function in
            guard !eventNames.contains(function.name),
                  let near = eventNames.first(where: { event in
                      event.lowercased().prefix(2) == function.name.lowercased().prefix(2)
                          && Spelling.distance(event.lowercased(), function.name.lowercased()) <= 2
                  }) else { return nil }
            let message = "\(function.name) looks like the event handler \(near) misspelled; as written it never runs as a handler"
            return Diagnostic(severity: .warning, file: script.fileName, line: function.line, message: message)
        }
    }
}
