import Crypto
import Relata

/// SHA-256 by swift-crypto (BoringSSL on Linux, CryptoKit on Apple platforms), which uses the
/// processor's SHA instructions where there are some: the digest of a large apply's
/// fingerprint in a fraction of the core's portable code's time, and the same digest.
///
/// ```swift
/// let fingerprint = try DeltaFingerprint.of(deltas, digest: CryptoSHA256())
/// ```
struct CryptoSHA256: RunningDigest {
    private var hasher = Crypto.SHA256()

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        hasher.update(bufferPointer: bytes)
    }

    consuming func hex() -> String {
        Relata.SHA256.hexDigits(of: Array(hasher.finalize()))
    }
}
