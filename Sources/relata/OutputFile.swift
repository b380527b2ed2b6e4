import Foundation
import Relata

/// Where a subcommand writes a file the user named (`--output`, `--save-briefcase`):
/// checked first, so nothing the user has is lost. An existing file is replaced only
/// when it is what the command itself makes (`isOurs`), or with `--force`.
struct OutputFile {
    let path: String
    /// How errors call it ("briefcase", "TypeScript declarations").
    let what: String
    let force: Bool

    var url: URL { URL(fileURLWithPath: path) }

    /// Checks that the file may be written.
    ///
    /// - Parameter isOurs: whether an existing file at the path is one this command made.
    /// - Throws: ``RelataError/Code/fileFailed`` naming the path: a folder is there, its folder
    ///   does not exist, or a file the command did not make is there and `force` is off.
    func checkWritable(isOurs: (URL) -> Bool) throws {
        var isFolder: ObjCBool = false
        let folder = url.deletingLastPathComponent()
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) {
            if isFolder.boolValue && !isOurs(url) {
                throw RelataError(.fileFailed, "a folder is there; name a file for the \(what)", location: path)
            }
            if !force && !isOurs(url) {
                throw RelataError(.fileFailed, "a file that is not \(what) is there; name another file, or add --force to replace it",
                                  location: path)
            }
        } else if !FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder) || !isFolder.boolValue {
            throw RelataError(.fileFailed, "the folder \(folder.path) does not exist", location: path)
        }
    }

    /// Writes the bytes (atomically: the old file stays whole if writing fails).
    func write(_ data: Data, isOurs: (URL) -> Bool) throws {
        try checkWritable(isOurs: isOurs)
        do {
            try data.write(to: url, options: .atomic)
        } catch {
            throw RelataError(.fileFailed, "the \(what) could not be written: \(Self.reason(error))", location: path)
        }
    }

    /// The system's reason for a failed write, in words.
    static func reason(_ error: any Error) -> String {
        let error = error as NSError
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        if error.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(error.code))) }
        switch CocoaError.Code(rawValue: error.code) {
        case .fileWriteNoPermission: return "permission denied"
        case .fileWriteOutOfSpace: return "the disk is full"
        case .fileWriteVolumeReadOnly: return "the disk is read-only"
        default: return "the system refused (\(error.domain) \(error.code))"
        }
    }

    /// Whether a file starts with the given bytes (how an earlier output of ours is recognized).
    static func starts(_ url: URL, with prefix: [UInt8]) -> Bool {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return false }
        defer { try? handle.close() }
        return (try? handle.read(upToCount: prefix.count)).map { Array($0) == prefix } ?? false
    }
}
