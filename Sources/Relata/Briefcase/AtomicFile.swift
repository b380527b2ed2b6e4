import Foundation
#if canImport(Darwin)
import Darwin
private let systemWrite = Darwin.write
#elseif canImport(Glibc)
import Glibc
private let systemWrite = Glibc.write
#endif

/// Writes a file so that a crash at any moment leaves either the old file or the
/// new one, whole: the bytes go to a temporary file beside it, are flushed to
/// disk, and the temporary file is renamed over the target (an atomic step),
/// then the folder is flushed so the rename itself survives a power loss.
enum AtomicFile {
    /// The temporary file a save writes before renaming it into place. Left behind
    /// only by a save that was interrupted; the next save overwrites it.
    static func temporaryURL(for url: URL) -> URL {
        url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).saving")
    }

    static func write(_ bytes: [UInt8], to url: URL) throws {
        let temporary = temporaryURL(for: url)
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0 else { throw failure("cannot create", temporary) }
        do {
            try bytes.withUnsafeBytes { buffer in
                var written = 0
                while written < buffer.count {
                    let result = systemWrite(descriptor, buffer.baseAddress! + written, buffer.count - written)
                    if result < 0 {
                        if errno == EINTR { continue }
                        throw failure("cannot write", temporary)
                    }
                    written += result
                }
            }
            guard fsync(descriptor) == 0 else { throw failure("cannot flush", temporary) }
        } catch {
            close(descriptor)
            unlink(temporary.path)
            throw error
        }
        close(descriptor)
        guard rename(temporary.path, url.path) == 0 else {
            let error = failure("cannot move the new file into place at", url)
            unlink(temporary.path)
            throw error
        }
        syncFolder(of: url)
    }

    /// Flushes a folder's entries (a rename) to disk; best effort.
    static func syncFolder(of url: URL) {
        let folder = open(url.deletingLastPathComponent().path, O_RDONLY)
        if folder >= 0 {
            fsync(folder)
            close(folder)
        }
    }

    static func read(_ url: URL) throws -> Data {
        do {
            return try Data(contentsOf: url)
        } catch {
            throw RelataError(.fileFailed, "cannot read the file (\(error.localizedDescription))", location: url.path)
        }
    }

    private static func failure(_ what: String, _ url: URL) -> RelataError {
        RelataError(.fileFailed, "\(what) \(url.path): \(String(cString: strerror(errno)))")
    }
}
