import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads the files Relata takes as input — schemas, data, scripts, edits, tests — with
/// errors that name the path and say why in plain words, never a bare Foundation message.
package enum InputFile {
    /// The bytes of a file.
    ///
    /// - Parameter what: how errors call the file ("schema file", "test file").
    /// - Throws: ``RelataError/Code/fileFailed`` with the path as its location: the file does not
    ///   exist, is a folder, or cannot be read (the system's reason).
    package static func data(at url: URL, what: String) throws -> Data {
        let path = url.path
        var info = stat()
        guard stat(path, &info) == 0 else { throw failure(what, reason(errno), path) }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            throw RelataError(.fileFailed, "the \(what) is a folder, not a file", location: path)
        }
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw failure(what, reason(errno), path) }
        // Through the descriptor, so pipes (`<(…)` in a shell) read as well as plain files.
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            return try handle.readToEnd() ?? Data()
        } catch {
            throw RelataError(.fileFailed, "the \(what) cannot be read: \(String(cString: strerror(errno)))", location: path)
        }
    }

    /// The text of a file, which must be UTF-8 (a leading byte-order mark is dropped).
    ///
    /// - Throws: as ``data(at:what:)``, and ``RelataError/Code/fileFailed`` naming the line
    ///   of the first byte that is not UTF-8.
    package static func text(at url: URL, what: String) throws -> String {
        try text(of: data(at: url, what: what), what: what, location: url.path)
    }

    /// Bytes as UTF-8 text, or an error naming the line of the first byte that is not UTF-8.
    package static func text(of data: Data, what: String, location: String) throws -> String {
        var bytes = data[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        var line = 1
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        loop: while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let scalar): if scalar.count == 1 && scalar.first == UInt8(ascii: "\n") { line += 1 }
            case .emptyInput: break loop
            case .error: break loop
            }
        }
        throw RelataError(.fileFailed, "the \(what) is not UTF-8 text (line \(line) has a byte that is not UTF-8); save it as UTF-8",
                          location: location)
    }

    private static func failure(_ what: String, _ reason: String, _ path: String) -> RelataError {
        RelataError(.fileFailed, "the \(what) \(reason)", location: path)
    }

    private static func reason(_ code: Int32) -> String {
        switch code {
        case ENOENT: return "does not exist"
        case EACCES, EPERM: return "cannot be read: permission denied"
        case ENOTDIR: return "does not exist (a part of its path is not a folder)"
        default: return "cannot be read: \(String(cString: strerror(code)))"
        }
    }
}

/// Where JSON text stops being valid, as a line and column.
package enum JSONSyntax {
    /// `line 2, column 14: invalid value` for text that does not parse; nil when it parses.
    package static func error(in data: Data) -> String? {
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            return nil
        } catch {
            let message = ((error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String) ?? "not valid JSON"
            let offset = message.range(of: "character ").flatMap { Int(message[$0.upperBound...].prefix { $0.isNumber }) }
            let (line, column) = position(of: offset ?? data.count, in: data)
            // JSONSerialization says "Invalid value around character 14."; keep the words, give the place as line and column.
            var words = message.components(separatedBy: " around character").first ?? message
            if words.hasSuffix(".") { words.removeLast() }
            let what = message.contains("end of file") ? "the text ends before the JSON does" : words.prefix(1).lowercased() + words.dropFirst()
            return "line \(line), column \(column): \(what)"
        }
    }

    /// The line and column (counting from 1, in characters) of a byte offset.
    static func position(of offset: Int, in data: Data) -> (line: Int, column: Int) {
        let end = min(max(offset, 0), data.count)
        var line = 1, lineStart = 0
        for (index, byte) in data.prefix(end).enumerated() where byte == UInt8(ascii: "\n") {
            line += 1
            lineStart = index + 1
        }
        let column = String(decoding: data[data.startIndex + lineStart ..< data.startIndex + end], as: UTF8.self).count + 1
        return (line, column)
    }
}
