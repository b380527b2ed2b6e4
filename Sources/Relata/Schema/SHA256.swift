/// SHA-256 (FIPS 180-4), for version hashes the core computes without a crypto
/// dependency. Not for secrets: nothing here is constant-time.
package enum SHA256 {
    private static let roundConstants: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    /// The digest of `bytes`, as 64 lower-case hexadecimal digits.
    package static func hex(of bytes: [UInt8]) -> String {
        var digest = Running()
        bytes.withUnsafeBytes { digest.update($0) }
        return digest.hex()
    }

    /// A digest of bytes given in parts, for a text too large to hold whole first.
    ///
    /// ```swift
    /// var digest = SHA256.Running()
    /// for part in parts { part.withUnsafeBytes { digest.update($0) } }
    /// let hex = digest.hex()
    /// ```
    package struct Running: RunningDigest {
        private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) =
            (0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19)
        /// The bytes after the last whole block: fewer than 64.
        private var partial: [UInt8] = []
        private var length: UInt64 = 0

        package init() {}

        package mutating func update(_ bytes: UnsafeRawBufferPointer) {
            length &+= UInt64(bytes.count)
            var rest = bytes
            if !partial.isEmpty {
                let taken = min(64 - partial.count, rest.count)
                partial.append(contentsOf: rest[..<taken])
                rest = UnsafeRawBufferPointer(rebasing: rest[taken...])
                guard partial.count == 64 else { return }
                partial.withUnsafeBytes { compress($0) }
                partial.removeAll(keepingCapacity: true)
            }
            // The whole blocks are read where they are.
            let whole = rest.count / 64 * 64
            compress(UnsafeRawBufferPointer(rebasing: rest[..<whole]))
            partial.append(contentsOf: rest[whole...])
        }

        /// The digest, as 64 lower-case hexadecimal digits: the rest, the padding and the length make one or two more blocks.
        package consuming func hex() -> String {
            var tail = partial
            tail.append(0x80)
            while tail.count % 64 != 56 { tail.append(0) }
            let bitLength = length &* 8
            for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
            tail.withUnsafeBytes { compress($0) }
            let words = [state.0, state.1, state.2, state.3, state.4, state.5, state.6, state.7]
            return SHA256.hexDigits(of: words.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> UInt32(24 - $0 * 8)) } })
        }

        private mutating func compress(_ blocks: UnsafeRawBufferPointer) {
            guard !blocks.isEmpty else { return }
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { words in
                roundConstants.withUnsafeBufferPointer { constants in
                    SHA256.compress(blocks, into: &state, words: words, constants: constants)
                }
            }
        }
    }

    /// A digest's bytes as lower-case hexadecimal digits, two a byte.
    package static func hexDigits(of digest: some Collection<UInt8>) -> String {
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: 2 * digest.count) { text in
            for (index, byte) in digest.enumerated() {
                text[2 * index] = digits.utf8Start[Int(byte >> 4)]
                text[2 * index + 1] = digits.utf8Start[Int(byte & 0xf)]
            }
            return 2 * digest.count
        }
    }

    /// Runs the compression function over each 64-byte block of `blocks` (a multiple of 64 bytes).
    private static func compress(_ blocks: UnsafeRawBufferPointer, into state: inout (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32),
                                 words: UnsafeMutableBufferPointer<UInt32>, constants: UnsafeBufferPointer<UInt32>) {
        for block in stride(from: 0, to: blocks.count, by: 64) {
            for index in 0..<16 {
                words[index] = UInt32(bigEndian: blocks.loadUnaligned(fromByteOffset: block + index * 4, as: UInt32.self))
            }
            for index in 16..<64 {
                let s0 = rotate(words[index - 15], 7) ^ rotate(words[index - 15], 18) ^ (words[index - 15] >> 3)
                let s1 = rotate(words[index - 2], 17) ^ rotate(words[index - 2], 19) ^ (words[index - 2] >> 10)
                words[index] = words[index - 16] &+ s0 &+ words[index - 7] &+ s1
            }
            var (a, b, c, d, e, f, g, h) = state
            for index in 0..<64 {
                let s1 = rotate(e, 6) ^ rotate(e, 11) ^ rotate(e, 25)
                let choice = (e & f) ^ (~e & g)
                let t1 = h &+ s1 &+ choice &+ constants[index] &+ words[index]
                let s0 = rotate(a, 2) ^ rotate(a, 13) ^ rotate(a, 22)
                let majority = (a & b) ^ (a & c) ^ (b & c)
                let t2 = s0 &+ majority
                (h, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
            }
            state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e, state.5 &+ f, state.6 &+ g, state.7 &+ h)
        }
    }

    private static func rotate(_ value: UInt32, _ count: UInt32) -> UInt32 {
        (value >> count) | (value << (32 - count))
    }
}

/// A SHA-256 digest fed in parts: ``SHA256/Running`` in the core; a data server may give one
/// its crypto library computes faster (the same digest, so the same fingerprints).
///
/// ```swift
/// var digest = SHA256.Running()
/// bytes.withUnsafeBytes { digest.update($0) }
/// let hex = digest.hex()   // 64 lower-case hexadecimal digits
/// ```
package protocol RunningDigest {
    /// Adds bytes to the digest.
    mutating func update(_ bytes: UnsafeRawBufferPointer)
    /// The SHA-256 digest of every byte added, as 64 lower-case hexadecimal digits.
    consuming func hex() -> String
}
