import ArgumentParser
import Relata
import RelataTools

/// The session offline rules see (`relata run`, `relata test`) — what a data server's login would
/// give them: the schema file's `session`, with what these options name in its place.
struct SessionOptions: ParsableArguments {
    @Option(name: .customLong("user"), help: "The user the rules see (session.User).")
    var user: String?

    @Option(name: .customLong("role"), help: "A role of the session; repeat for more (they replace the schema's).")
    var roles: [String] = []

    @Option(name: .customLong("value"), help: "A session value, KEY=VALUE (a number, true, false, null, or text); repeat for more.")
    var values: [String] = []

    func validate() throws {
        for value in values where !value.contains("=") || value.hasPrefix("=") {
            throw ValidationError("--value takes KEY=VALUE, not '\(value)'")
        }
    }

    /// The schema's session with the options' user, roles and values in place of its own.
    func session(over schema: Schema) throws -> Session {
        var session = try schema.defaultSession()
        session.values.merge(CommandLineValues.parse(values)) { $1 }
        if let user { session.values["User"] = .string(user) }
        if !roles.isEmpty { session.roles = roles }
        return session
    }
}

/// `name=value` text from a command line as field values: whole numbers, numbers, booleans and
/// NULL by their look, text otherwise (`--param`, `--value`).
enum CommandLineValues {
    static func parse(_ pairs: [String]) -> [String: Value] {
        var values: [String: Value] = [:]
        for pair in pairs {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let name = parts[0], text = parts.count > 1 ? parts[1] : ""
            if let integer = Int64(text) { values[name] = .integer(integer) }
            else if let number = Double(text), number.isFinite { values[name] = .double(number) }
            else if text == "true" || text == "false" { values[name] = .boolean(text == "true") }
            else if text == "null" { values[name] = .null }
            else { values[name] = .string(text) }
        }
        return values
    }
}
