package import CJavaScriptCore
import Foundation
import Relata

/// Conversion between Relata values and JavaScript values.
///
/// | Relata | JavaScript |
/// |---|---|
/// | NULL | `null` (and `undefined` reads back as NULL) |
/// | integer, double | number (integers beyond ±2^53 lose precision) |
/// | decimal (Decimal, Currency) | number; a number written to a Decimal field is read by its shortest decimal spelling, so `19.99` stays 19.99 |
/// | boolean | boolean |
/// | string | string |
/// | date | `Date` |
/// | GUID | string (`"E621E1F8-C36C-495A-93FC-0C247A3E6E5F"`); a string written to a Guid field is parsed |
/// | blob | `Uint8Array` (a copy); an `ArrayBuffer` or any typed array reads back as a blob |
extension ScriptContext {
    func jsValue(_ value: Value) -> JSValueRef {
        Self.jsValue(value, in: ref)
    }

    /// A field value as a JavaScript value made in `context` — any context of the machine, such
    /// as the one a property callback is given, so a row's read needs no ``ScriptContext``.
    static func jsValue(_ value: Value, in context: JSContextRef) -> JSValueRef {
        switch value {
        case .null: return JSValueMakeNull(context)
        case .integer(let integer): return JSValueMakeNumber(context, Double(integer))
        case .double(let double): return JSValueMakeNumber(context, double)
        case .decimal: return JSValueMakeNumber(context, value.doubleValue ?? .nan)
        case .boolean(let bool): return JSValueMakeBoolean(context, bool)
        case .string(let string): return Self.string(string, in: context)
        case .date(let date):
            var milliseconds: JSValueRef? = JSValueMakeNumber(context, date.javaScriptTime)
            return JSObjectMakeDate(context, 1, &milliseconds, nil)
        case .guid(let uuid): return Self.string(uuid.uuidString, in: context)
        case .blob(let data):
            guard let array = JSObjectMakeTypedArray(context, kJSTypedArrayTypeUint8Array, data.count, nil) else { return JSValueMakeNull(context) }
            if let bytes = JSObjectGetTypedArrayBytesPtr(context, array, nil) {
                data.withUnsafeBytes { source in
                    // An empty blob's bytes may have no address: nothing to copy then.
                    if let start = source.baseAddress { bytes.copyMemory(from: start, byteCount: data.count) }
                }
            }
            return array
        }
    }

    /// Converts a JavaScript value to a field value. With a field type, strings
    /// are parsed for Guid, DateTime, Decimal and Blob fields, and numbers become
    /// decimals by their shortest spelling; checking the value against the field
    /// is the table's job.
    func value(from js: JSValueRef, for type: DataType? = nil) throws -> Value {
        switch JSValueGetType(ref, js) {
        case kJSTypeUndefined, kJSTypeNull:
            return .null
        case kJSTypeBoolean:
            return .boolean(JSValueToBoolean(ref, js))
        case kJSTypeNumber:
            let number = JSValueToNumber(ref, js, nil)
            if type?.storage == .decimal, number.isFinite { return .decimal(Decimal(string: "\(number)") ?? Decimal(number)) }
            if number.rounded() == number, abs(number) <= 9_007_199_254_740_992 { return .integer(Int64(number)) }
            return .double(number)
        case kJSTypeString:
            let text = JSString.string(of: js, in: ref) ?? ""
            if let type, [.guid, .date, .decimal, .blob].contains(type.storage), let parsed = try? type.value(parsing: text) {
                return parsed
            }
            return .string(text)
        default:
            if JSValueIsDate(ref, js) {
                return Date(javaScriptTime: JSValueToNumber(ref, js, nil)).map(Value.date) ?? .null
            }
            if let object = JSValueToObject(ref, js, nil) {
                if JSValueGetTypedArrayType(ref, js, nil) == kJSTypedArrayTypeArrayBuffer {
                    let count = JSObjectGetArrayBufferByteLength(ref, object, nil)
                    guard let bytes = JSObjectGetArrayBufferBytesPtr(ref, object, nil) else { return .blob(Data()) }
                    return .blob(Data(bytes: bytes, count: count))
                }
                if JSValueGetTypedArrayType(ref, js, nil) != kJSTypedArrayTypeNone {
                    let count = JSObjectGetTypedArrayByteLength(ref, object, nil)
                    let offset = JSObjectGetTypedArrayByteOffset(ref, object, nil)
                    guard let bytes = JSObjectGetTypedArrayBytesPtr(ref, object, nil) else { return .blob(Data()) }
                    return .blob(Data(bytes: bytes + offset, count: count))
                }
            }
            let shown = JSString.string(of: js, in: ref) ?? "an object"
            throw ScriptError(.runtime, "\(shown.prefix(60)) is not a field value (use a number, string, boolean, Date, Uint8Array or null)")
        }
    }
}

/// Numbers that come back from JavaScript are untrusted: they may be fractions,
/// NaN, infinities or far beyond `Int`'s range.
extension ScriptContext {
    /// Whether a value is a promise (anything with a `then` function).
    func isPromise(_ value: JSValueRef) -> Bool {
        guard JSValueIsObject(ref, value), let object = JSValueToObject(ref, value, nil) else { return false }
        let then = property("then", of: object)
        return JSValueIsObject(ref, then) && JSValueToObject(ref, then, nil).map { JSObjectIsFunction(ref, $0) } == true
    }

    /// The value as an `Int` when it is an integral number that fits, else nil.
    func integer(from value: JSValueRef) -> Int? {
        guard JSValueIsNumber(ref, value) else { return nil }
        return Int(exactly: JSValueToNumber(ref, value, nil))
    }

    /// The value as an index into a collection of `count` elements, else nil.
    func index(from value: JSValueRef, count: Int) -> Int? {
        guard let index = integer(from: value), index >= 0, index < count else { return nil }
        return index
    }

    /// The `length` of an array-like object, read defensively (0 when it is not a sane length).
    package func length(of object: JSObjectRef) -> Int {
        guard let length = integer(from: property("length", of: object)), length >= 0, length <= Int(UInt32.max) else { return 0 }
        return length
    }

    /// The elements of an array that are objects (anything else in it, or a value that is no array, is skipped).
    package func objects(in value: JSValueRef) -> [JSObjectRef] {
        guard JSValueIsArray(ref, value), let array = JSValueToObject(ref, value, nil) else { return [] }
        return (0..<length(of: array)).compactMap { index in
            let element = element(index, of: array)
            return JSValueIsObject(ref, element) ? JSValueToObject(ref, element, nil) : nil
        }
    }

    /// The element at an index of an array-like object.
    package func element(_ index: Int, of object: JSObjectRef) -> JSValueRef {
        guard let index = UInt32(exactly: index) else { return JSValueMakeUndefined(ref) }
        return JSObjectGetPropertyAtIndex(ref, object, index, nil) ?? JSValueMakeUndefined(ref)
    }
}
