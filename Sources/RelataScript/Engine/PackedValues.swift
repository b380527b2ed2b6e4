internal import CJavaScriptCore
import Relata

/// Field values on their way into JavaScript in bulk: a few calls into JavaScriptCore whatever
/// their number, where making and storing values one by one costs two calls a value, each
/// taking the engine's lock. `relata.unpack` makes of them the values
/// ``ScriptContext/jsValue(_:)`` makes one at a time (`PackedValuesTests` holds the two equal).
///
/// ```swift
/// var packed = PackedValues()
/// for value in change.newValues.values { packed.append(value) }
/// let values = try context.call(context.helper("unpack")) { packed.appendArguments(to: &$0, in: context) }
/// ```
struct PackedValues {
    /// What each value is, as `relata.unpack` reads it.
    private enum Kind: UInt8 {
        case null = 0, number, boolean, string, date, other
    }

    private var kinds: [UInt8] = []
    /// Per value: the number, the date's milliseconds, 1 or 0 for a boolean, a string's UTF-16 length.
    private var numbers: [Double] = []
    /// Every string value, one after another.
    private var text = ""
    /// Values of no packed kind (blobs), by position.
    private var others: [(position: Int, value: Value)] = []

    var count: Int { kinds.count }

    mutating func append(_ value: Value) {
        switch value {
        case .null: add(.null, 0)
        case .integer(let integer): add(.number, Double(integer))
        case .double(let double): add(.number, double)
        case .decimal: add(.number, value.doubleValue ?? .nan)
        case .boolean(let bool): add(.boolean, bool ? 1 : 0)
        case .string(let string): addString(string)
        case .guid(let uuid): addString(uuid.uuidString)
        case .date(let date): add(.date, date.javaScriptTime)
        case .blob:
            others.append((kinds.count, value))
            add(.other, 0)
        }
    }

    private mutating func add(_ kind: Kind, _ number: Double) {
        kinds.append(kind.rawValue)
        numbers.append(number)
    }

    private mutating func addString(_ string: String) {
        text += string
        add(.string, Double(string.utf16.count))
    }

    /// Appends the arguments of `relata.unpack`: the kinds (`Uint8Array`), the numbers
    /// (`Float64Array`), the text, and the other values (an array holding them at their positions).
    func appendArguments(to arguments: inout RootedValues, in context: ScriptContext) {
        arguments.append(Self.typedArray(kinds, kJSTypedArrayTypeUint8Array, in: context))
        arguments.append(Self.typedArray(numbers, kJSTypedArrayTypeFloat64Array, in: context))
        arguments.append(context.string(text))
        let array = context.makeArray()
        arguments.append(array)
        for (position, value) in others {
            JSObjectSetPropertyAtIndex(context.ref, array, UInt32(position), context.jsValue(value), nil)
        }
    }

    static func typedArray<Element: BitwiseCopyable>(_ elements: [Element], _ type: JSTypedArrayType, in context: ScriptContext) -> JSValueRef {
        guard let array = JSObjectMakeTypedArray(context.ref, type, elements.count, nil) else { return JSValueMakeNull(context.ref) }
        if !elements.isEmpty, let bytes = JSObjectGetTypedArrayBytesPtr(context.ref, array, nil) {
            elements.withUnsafeBytes { bytes.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        }
        return array
    }

    /// `relata.unpack(kinds, numbers, text, others)`, for the bootstrap: the values as an array.
    /// It keeps the engine's own `Date` and `substring`, whatever scripts do to the globals.
    static let unpackScript = """
        relata.unpack = (function (NativeDate, apply, substring) {
            return function (kinds, numbers, text, others) {
                const values = new Array(kinds.length);
                let at = 0;
                for (let k = 0; k < kinds.length; k++) {
                    switch (kinds[k]) {
                    case \(Kind.null.rawValue): values[k] = null; break;
                    case \(Kind.number.rawValue): values[k] = numbers[k]; break;
                    case \(Kind.boolean.rawValue): values[k] = numbers[k] !== 0; break;
                    case \(Kind.string.rawValue): { const end = at + numbers[k]; values[k] = apply(substring, text, [at, end]); at = end; break; }
                    case \(Kind.date.rawValue): values[k] = new NativeDate(numbers[k]); break;
                    default: values[k] = others[k];
                    }
                }
                return values;
            };
        })(Date, Reflect.apply, String.prototype.substring);
        """
}
