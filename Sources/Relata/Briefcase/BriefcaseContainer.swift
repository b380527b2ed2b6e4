import Foundation

/// The framing every briefcase file shares: magic, format version, kind, a
/// length-prefixed payload and a checksum over all of it. Reading checks each
/// and says plainly what is wrong — not a briefcase, a newer format, truncated,
/// damaged — before any of the payload is trusted.
enum BriefcaseContainer {
    enum Kind: UInt8 {
        /// A whole briefcase: properties and tables.
        case briefcase = 0
        /// The manifest of a folder briefcase: properties and the table files.
        case manifest = 1
        /// One table of a folder briefcase.
        case table = 2

        var noun: String {
            switch self {
            case .briefcase: return "a briefcase file"
            case .manifest: return "a briefcase folder's manifest"
            case .table: return "a briefcase table file"
            }
        }
    }

    /// Frames a payload that `body` writes: header, payload, checksum, in one buffer.
    static func make(_ kind: Kind, capacity: Int = 0, _ body: (inout BinaryWriter) throws -> Void) rethrows -> [UInt8] {
        var writer = BinaryWriter(capacity: capacity + BriefcaseFormat.headerSize + 8)
        for byte in BriefcaseFormat.magic { writer.write(byte) }
        writer.write(BriefcaseFormat.version)
        writer.write(kind.rawValue)
        let length = writer.placeholder()
        try body(&writer)
        writer.patch(UInt64(writer.bytes.count - BriefcaseFormat.headerSize), at: length)
        let checksum = writer.bytes.withUnsafeBytes { BriefcaseFormat.checksum($0) }
        writer.write(checksum)
        return writer.bytes
    }

    /// Checks a file's framing and calls `body` with a reader over its payload.
    static func read<Result>(_ url: URL, expecting kind: Kind, _ body: (inout BinaryReader) throws -> Result) throws -> Result {
        let data = try AtomicFile.read(url)
        do {
            return try data.withUnsafeBytes { bytes in
                try read(bytes, expecting: kind, name: url.lastPathComponent, body)
            }
        } catch var error as RelataError where error.location == nil {
            error.location = url.path
            throw error
        }
    }

    static func read<Result>(_ bytes: UnsafeRawBufferPointer, expecting kind: Kind, name: String,
                             _ body: (inout BinaryReader) throws -> Result) throws -> Result {
        let magic = BriefcaseFormat.magic
        guard bytes.count >= magic.count, Array(bytes.prefix(magic.count)) == magic else {
            throw RelataError(.invalidBriefcase, "not a Relata briefcase: the file does not start with \"RELATABC\"")
        }
        var header = BinaryReader(bytes, from: magic.count, context: name)
        let version = try header.read(UInt32.self)
        guard version <= BriefcaseFormat.version else {
            throw RelataError(.invalidBriefcase, "written in briefcase format \(version), newer than this Relata reads (up to \(BriefcaseFormat.version)); update Relata to open it")
        }
        guard version >= 1 else { throw BriefcaseFormat.damaged("format version 0 does not exist; the file is damaged") }
        let kindByte = try header.read(UInt8.self)
        guard let found = Kind(rawValue: kindByte) else { throw BriefcaseFormat.damaged("\(kindByte) is not a kind of briefcase file; the file is damaged") }
        guard found == kind else { throw RelataError(.invalidBriefcase, "this is \(found.noun), not \(kind.noun)") }
        let length = try header.read(UInt64.self)
        let payloadStart = header.offset
        guard length <= UInt64(bytes.count), payloadStart + Int(length) + 8 == bytes.count else {
            throw BriefcaseFormat.damaged("the file is \(bytes.count) bytes, its header says its payload alone is \(length): it was cut short or added to")
        }
        let payloadEnd = payloadStart + Int(length)
        var trailer = BinaryReader(bytes, from: payloadEnd, context: name)
        let stored = try trailer.read(UInt64.self)
        guard stored == BriefcaseFormat.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<payloadEnd])) else {
            throw BriefcaseFormat.damaged("the checksum does not match: the file is damaged")
        }
        var payload = BinaryReader(bytes, from: payloadStart, to: payloadEnd, context: name)
        payload.formatVersion = version
        let result = try body(&payload)
        guard payload.remaining == 0 else { throw BriefcaseFormat.damaged("\(payload.remaining) bytes follow the last table") }
        return result
    }

    static func write(_ properties: [String: String], into writer: inout BinaryWriter) {
        writer.write(UInt32(properties.count))
        for key in properties.keys.sorted() {
            writer.write(key)
            writer.write(properties[key]!)
        }
    }

    static func readProperties(from reader: inout BinaryReader) throws -> [String: String] {
        var properties: [String: String] = [:]
        for _ in 0..<(try reader.read(UInt32.self)) {
            let key = try reader.readString()
            properties[key] = try reader.readString()
        }
        return properties
    }
}
