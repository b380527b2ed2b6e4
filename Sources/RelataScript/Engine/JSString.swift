package import CJavaScriptCore
import Foundation

/// Converts between Swift strings and JavaScriptCore strings. A `JSStringRef`
/// made here is owned by the caller and released with `JSStringRelease`.
package enum JSString {
    /// A new JSStringRef holding `string` (UTF-16, embedded NULs kept).
    static func make(_ string: String) -> JSStringRef {
        let units = Array(string.utf16)
        return units.withUnsafeBufferPointer { JSStringCreateWithCharacters($0.baseAddress, units.count) }
    }

    /// Runs `body` with a temporary JSStringRef.
    static func with<T>(_ string: String, _ body: (JSStringRef) throws -> T) rethrows -> T {
        let js = make(string)
        defer { JSStringRelease(js) }
        return try body(js)
    }

    /// The Swift string of a JSStringRef (which stays owned by the caller).
    ///
    /// Goes through UTF-8, which JavaScriptCore writes straight from its usual
    /// 8-bit strings; a string holding a lone surrogate (which UTF-8 cannot
    /// carry) is read as UTF-16 instead, the surrogate repaired to U+FFFD.
    static func string(_ js: JSStringRef) -> String {
        let length = JSStringGetLength(js)
        guard length > 0 else { return "" }
        let capacity = JSStringGetMaximumUTF8CStringSize(js)
        let utf8 = String(unsafeUninitializedCapacity: capacity) { buffer in
            buffer.withMemoryRebound(to: CChar.self) { max(JSStringGetUTF8CString(js, $0.baseAddress, capacity) - 1, 0) }
        }
        if utf8.utf16.count == length { return utf8 }
        guard let characters = JSStringGetCharactersPtr(js) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: characters, count: length), as: UTF16.self)
    }

    /// The index of the name in `names` that has exactly the bytes of `js`, found without making a
    /// Swift string of it: rules read fields by their names again and again, and a string made per
    /// read was a third of a read's cost. Nil when no name matches byte for byte — the caller then
    /// looks the name up in full (another case, a virtual field, a name to refuse).
    ///
    /// ```swift
    /// if let field = JSString.exactMatch(name, in: table.fieldNames) { … }
    /// ```
    static func exactMatch(_ js: JSStringRef, in names: some Collection<String>) -> Int? {
        let length = JSStringGetLength(js)
        guard length > 0, length <= maxMatchedLength else { return nil }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: maxMatchedLength * 3 + 1) { buffer -> Int? in
            guard let bytes = buffer.baseAddress else { return nil }
            let count = JSStringGetUTF8CString(js, bytes, buffer.count) - 1   // without the NUL
            guard count > 0 else { return nil }
            for (index, name) in names.enumerated() where name.utf8.count == count {
                let same = name.utf8.withContiguousStorageIfAvailable { stored in
                    stored.baseAddress.map { memcmp($0, bytes, count) == 0 } ?? false
                }
                if same == true { return index }
            }
            return nil
        }
    }

    /// The longest name ``exactMatch(_:in:)`` compares (in UTF-16 units); longer ones take the full lookup.
    private static let maxMatchedLength = 64

    /// A JavaScript value converted to a string with `String(value)` semantics; nil if that throws.
    package static func string(of value: JSValueRef, in context: JSContextRef) -> String? {
        guard let js = JSValueToStringCopy(context, value, nil) else { return nil }
        defer { JSStringRelease(js) }
        return string(js)
    }
}
