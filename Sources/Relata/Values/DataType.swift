import Foundation

/// The data type of a field: every type of the original system.
///
/// Each type maps to one ``Value`` case (its ``storage``). Integer types also
/// carry a range, checked on every write.
///
/// ```swift
/// DataType.smallInt.storage        // .integer
/// try DataType.float.coerce(.integer(3))   // .double(3.0): an integer fits a Float field
/// ```
public enum DataType: String, Sendable, Codable, CaseIterable, Hashable {
    case autoInc, largeAutoInc
    case integer, smallInt, shortInt, byte, word, cardinal, largeInt, largeUInt
    case float, singleFloat
    case currency, decimal
    case boolean
    case dateTime
    case guid
    case xml
    case blob
    case string, fixedChar, memo, wideString, fixedWideChar, wideMemo

    /// The ``Value`` case a field of this type holds.
    public enum Storage: Sendable, Hashable {
        case integer, double, decimal, boolean, string, date, guid, blob
    }

    /// The ``Value`` case a field of this type holds.
    public var storage: Storage {
        switch self {
        case .autoInc, .largeAutoInc, .integer, .smallInt, .shortInt, .byte, .word,
             .cardinal, .largeInt, .largeUInt: return .integer
        case .float, .singleFloat: return .double
        case .currency, .decimal: return .decimal
        case .boolean: return .boolean
        case .dateTime: return .date
        case .guid: return .guid
        case .blob: return .blob
        case .xml, .string, .fixedChar, .memo, .wideString, .fixedWideChar, .wideMemo: return .string
        }
    }

    /// True for ``autoInc`` and ``largeAutoInc``: values the data source assigns.
    public var isAutoIncrement: Bool { self == .autoInc || self == .largeAutoInc }

    /// The range of an integer type. `largeUInt` is limited to `0...Int64.max`.
    public var integerRange: ClosedRange<Int64>? {
        switch self {
        case .shortInt: return Int64(Int8.min)...Int64(Int8.max)
        case .byte: return 0...Int64(UInt8.max)
        case .smallInt: return Int64(Int16.min)...Int64(Int16.max)
        case .word: return 0...Int64(UInt16.max)
        case .integer, .autoInc: return Int64(Int32.min)...Int64(Int32.max)
        case .cardinal: return 0...Int64(UInt32.max)
        case .largeInt, .largeAutoInc: return Int64.min...Int64.max
        case .largeUInt: return 0...Int64.max
        default: return nil
        }
    }
}
