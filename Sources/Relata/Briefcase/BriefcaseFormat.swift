import Foundation

/// The briefcase file format (documented in `Documentation/Briefcase.md`).
///
/// Every briefcase file (a whole briefcase, a folder's manifest, or one of
/// its table files) is framed the same way:
///
///     "RELATABC"            8 bytes, the magic
///     version               u32 (this code writes 2, reads 1 and 2)
///     kind                  u8: 0 briefcase, 1 manifest, 2 table
///     payload length        u64
///     payload               briefcase: properties, then each table (length-prefixed);
///                           manifest: generation, properties, (table name, file name)…;
///                           table: one table
///     checksum              u64 over everything before it
///
/// Numbers are little-endian. A table is its name, its field definitions
/// (JSON), its temporary-key and change-id counters, one column per field
/// (a NULL bitmap and the values), then its change records. From version 2 a
/// change record ends with the row's edits (``RowEdit``): a count, then each
/// edit's sequence (i64), kind (u8: 0 insert, 1 update, 2 delete) and values.
enum BriefcaseFormat {
    static let magic = Array("RELATABC".utf8)
    static let tableMagic = Array("RELATATB".utf8)
    static let version: UInt32 = 2
    /// Magic, version, kind and payload length.
    static let headerSize = 8 + 4 + 1 + 8

    static func damaged(_ message: String) -> RelataError {
        RelataError(.invalidBriefcase, message)
    }

    /// A 64-bit checksum of `bytes`, eight bytes at a time (FNV-1a over words, then mixed):
    /// it tells a damaged or truncated file from a good one, at memory speed.
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        let prime: UInt64 = 0x0000_0100_0000_01b3
        let words = bytes.count / 8
        for index in 0..<words {
            hash = (hash ^ bytes.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self)) &* prime
            hash ^= hash >> 29
        }
        for index in (words * 8)..<bytes.count {
            hash = (hash ^ UInt64(bytes[index])) &* prime
        }
        hash ^= hash >> 33
        hash = hash &* 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        return hash
    }
}
