import Foundation

/// The source of a rule script and the file name its errors show.
///
/// ```swift
/// let script = RuleScript("""
///     function beforePost(row) {
///         if (row.Quantity <= 0) fail('Quantity must be positive');
///     }
///     """, fileName: "OrderDetails.js")
/// let fromDisk = try RuleScript(contentsOf: URL(fileURLWithPath: "rules/OrderDetails.js"))
/// ```
public struct RuleScript: Sendable, Hashable, Codable {
    /// The JavaScript source.
    public var source: String
    /// The name errors, stacks and logs show for the script.
    public var fileName: String

    public init(_ source: String, fileName: String) {
        self.source = source
        self.fileName = fileName
    }

    /// Reads a script file; its file name is the path's last component.
    public init(contentsOf url: URL) throws {
        try self.init(contentsOf: url, name: url.lastPathComponent)
    }

    /// A script read from a file, named as errors and stacks should show it
    /// (a schema names its scripts by their path relative to the schema file).
    ///
    /// - Throws: ``RelataError/Code/fileFailed`` naming the path when the file is missing,
    ///   a folder, unreadable or not UTF-8.
    public init(contentsOf url: URL, name: String) throws {
        self.init(try InputFile.text(at: url, what: "script"), fileName: name)
    }
}
