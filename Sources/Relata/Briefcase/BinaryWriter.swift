import Foundation

/// Appends little-endian numbers, strings and raw arrays to a byte buffer.
struct BinaryWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    /// Forgets the bytes written, keeping the room they took.
    mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    mutating func write<T: FixedWidthInteger>(_ value: T) {
        // Byte by byte: for a few bytes, quicker than `append(contentsOf:)` (about 7 ns against 12–16 for eight).
        withUnsafeBytes(of: value.littleEndian) { raw in
            for byte in raw { bytes.append(byte) }
        }
    }

    mutating func write(_ value: Double) { write(value.bitPattern) }

    mutating func write(_ bool: Bool) { write(UInt8(bool ? 1 : 0)) }

    /// A length (u32) then the UTF-8 bytes.
    mutating func write(_ string: String) {
        var string = string
        string.withUTF8 { utf8 in
            write(UInt32(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    /// A length (u64) then the bytes.
    mutating func write(bytes data: some Collection<UInt8>) {
        write(UInt64(data.count))
        bytes.append(contentsOf: data)
    }

    /// The raw memory of an array of plain values (numbers, bitmaps), preceded by its count (u64).
    /// Little-endian machines only write their memory as is (every platform Swift runs on today).
    mutating func write<T: BitwiseCopyable>(raw array: [T]) {
        write(UInt64(array.count))
        array.withUnsafeBytes { bytes.append(contentsOf: $0) }
    }

    mutating func append(_ other: BinaryWriter) { bytes.append(contentsOf: other.bytes) }

    mutating func write(rawBytesOf value: some BitwiseCopyable) {
        withUnsafeBytes(of: value) { bytes.append(contentsOf: $0) }
    }

    mutating func reserve(more count: Int) { bytes.reserveCapacity(bytes.count + count) }

    /// Writes a u64 to fill in later with ``patch(_:at:)`` (a length not known yet); returns its offset.
    mutating func placeholder() -> Int {
        defer { write(UInt64(0)) }
        return bytes.count
    }

    mutating func patch(_ value: UInt64, at offset: Int) {
        withUnsafeBytes(of: value.littleEndian) { raw in
            for index in 0..<8 { bytes[offset + index] = raw[index] }
        }
    }
}

extension String {
    /// Whether bytes are valid UTF-8 (ASCII is checked first, quickly).
    static func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        if bytes.allSatisfy({ $0 < 0x80 }) { return true }
        if #available(macOS 15, iOS 18, *) {
            return String(validating: bytes, as: UTF8.self) != nil
        }
        return String(bytes: bytes, encoding: .utf8) != nil
    }
}

/// Reads what ``BinaryWriter`` wrote; every read is checked against the end of the data.
struct BinaryReader {
    private let bytes: UnsafeRawBufferPointer
    private(set) var offset: Int
    let end: Int
    /// What is being read, for error messages (`table Orders`); setting it leaves ``element``.
    var context: String {
        get { element.map { "\(base)\($0.list)[\($0.index)]" } ?? base }
        set { base = newValue; element = nil }
    }
    private var base: String
    /// The entry of a list being read (`.changes`, 12), kept apart from ``context`` so that a
    /// reader of many entries builds their names only for an error.
    var element: (list: StaticString, index: Int)?
    /// The format version of the file being read (what it holds depends on it).
    var formatVersion = BriefcaseFormat.version

    init(_ bytes: UnsafeRawBufferPointer, from offset: Int = 0, to end: Int? = nil, context: String) {
        self.bytes = bytes
        self.offset = offset
        self.end = end ?? bytes.count
        self.base = context
    }

    var remaining: Int { end - offset }

    private mutating func take(_ count: Int) throws -> UnsafeRawBufferPointer {
        guard count >= 0, count <= remaining else {
            throw BriefcaseFormat.damaged("\(context): the data ends early (needed \(count) bytes at offset \(offset), \(remaining) left)")
        }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
    }

    mutating func read<T: FixedWidthInteger>(_: T.Type = T.self) throws -> T {
        let raw = try take(MemoryLayout<T>.size)
        var value = T.zero
        withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: raw) }
        return T(littleEndian: value)
    }

    mutating func readDouble() throws -> Double { Double(bitPattern: try read(UInt64.self)) }

    mutating func readBool() throws -> Bool {
        switch try read(UInt8.self) {
        case 0: return false
        case 1: return true
        case let other: throw BriefcaseFormat.damaged("\(context): \(other) is not a boolean")
        }
    }

    /// A count that must fit what is left, at `size` bytes per element at least.
    mutating func readCount(elementSize: Int = 1, _ what: @autoclosure () -> String) throws -> Int {
        let count = try read(UInt64.self)
        guard count <= UInt64(remaining / max(elementSize, 1)) else {
            throw BriefcaseFormat.damaged("\(context): \(what()) claims \(count) entries, more than the data holds")
        }
        return Int(count)
    }

    mutating func readString() throws -> String {
        let length = Int(try read(UInt32.self))
        let raw = try take(length)
        let utf8 = raw.bindMemory(to: UInt8.self)
        guard String.isValidUTF8(utf8) else {
            throw BriefcaseFormat.damaged("\(context): a string is not valid UTF-8")
        }
        return String(decoding: utf8, as: UTF8.self)
    }

    mutating func readBytes() throws -> UnsafeRawBufferPointer {
        try take(try readCount("a byte block"))
    }

    mutating func read<T: BitwiseCopyable>(raw _: T.Type, _ what: @autoclosure () -> String) throws -> [T] {
        let count = try readCount(elementSize: MemoryLayout<T>.stride, what())
        let raw = try take(count * MemoryLayout<T>.stride)
        return [T](unsafeUninitializedCapacity: count) { buffer, initialized in
            UnsafeMutableRawBufferPointer(buffer).copyMemory(from: raw)
            initialized = count
        }
    }

    /// Sixteen bytes as ``BinaryWriter/write(rawBytesOf:)`` wrote a UUID's.
    mutating func readUUID() throws -> UUID {
        let raw = try take(16)
        var uuid = UUID.zero.uuid
        withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: raw) }
        return UUID(uuid: uuid)
    }

    mutating func skip(_ count: Int) throws { _ = try take(count) }

    /// A reader over the next `length` bytes (this reader does not move).
    func subreader(length: Int) throws -> BinaryReader {
        guard length >= 0, length <= remaining else {
            throw BriefcaseFormat.damaged("\(context): a block of \(length) bytes runs past the end of the data")
        }
        var reader = BinaryReader(bytes, from: offset, to: offset + length, context: context)
        reader.formatVersion = formatVersion
        return reader
    }
}
