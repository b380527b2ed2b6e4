extension String {
    /// The pieces between occurrences of an ASCII `separator`, empty pieces kept.
    /// Splits the UTF-8 bytes as a plain array: the exception descriptions of a batch
    /// with thousands of failing rows go through here.
    func parts(separatedBy separator: Unicode.Scalar) -> [String] {
        precondition(separator.isASCII, "the separator must be ASCII")
        return Array(utf8).split(separator: UInt8(separator.value), omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
    }
}
