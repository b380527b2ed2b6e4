import Relata

/// Roles named in a server's configuration that no user has: a misspelt one would quietly close a
/// door (a permission, the console's Server page), so the server refuses to start.
public enum RoleNames {
    /// The error for `role`, named by `namedBy` (`console.adminRoles names`), with the closest
    /// known role and the known ones.
    ///
    /// ```swift
    /// throw RoleNames.unknown("Manger", namedBy: "console.adminRoles names", known: ["Manager"])
    /// ```
    public static func unknown(_ role: String, namedBy: String, known: Set<String>, table: String? = nil) -> RelataError {
        let suggestion = Spelling.closest(to: role, among: Array(known)).map { " (did you mean \($0)?)" } ?? ""
        return RelataError(.invalidArgument, "\(namedBy) the role '\(role)', which no user has\(suggestion); "
                           + "known roles: \(known.sorted().joined(separator: ", ")). Declare a role only future users will have in the domain's \"roles\"",
                           table: table)
    }
}
