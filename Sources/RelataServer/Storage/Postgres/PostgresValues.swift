import Foundation
import NIOCore
import PostgresNIO
import Relata

/// Field values to and from PostgreSQL, exactly: integers as `bigint`, decimals as `numeric`
/// (never through a `Double`), dates as `timestamptz`, GUIDs as `uuid`, blobs as `bytea`.
enum PostgresValues {
    /// Binds a value as the next parameter; NULL is untyped, so the database takes the column's type.
    static func bind(_ value: Value, to binds: inout PostgresBindings) throws {
        switch value {
        case .null: binds.appendNull()
        case .integer(let integer): binds.append(integer)
        case .double(let double): binds.append(double)
        case .decimal(let decimal): try binds.append(decimal)
        case .boolean(let bool): binds.append(bool)
        case .string(let text): binds.append(text)
        case .date(let date): binds.append(Timestamp(date))
        case .guid(let uuid): binds.append(uuid)
        case .blob(let data): binds.append(ByteBuffer(bytes: data))
        }
    }

    /// A stored value read back as a field's value.
    ///
    /// - Throws: ``RelataError`` naming the field when the column's type does not fit it
    ///   (a table changed by something else than Relata).
    static func value(_ cell: PostgresCell, for field: FieldDefinition) throws -> Value {
        guard cell.bytes != nil else { return .null }
        do {
            switch field.type.storage {
            case .integer: return try field.coerced(.integer(cell.decode(Int64.self)))
            case .boolean: return .boolean(try cell.decode(Bool.self))
            case .double: return try field.coerced(.double(cell.decode(Double.self)))
            case .decimal: return try field.coerced(.decimal(cell.decode(Decimal.self)))
            case .string: return .string(try cell.decode(String.self))
            case .date: return .date(try date(cell))
            case .guid: return .guid(try cell.decode(UUID.self))
            case .blob: return .blob(try cell.decode(Data.self))
            }
        } catch let error as RelataError {
            throw error
        } catch {
            throw RelataError(.typeMismatch, "the stored \(cell.dataType) value does not fit a \(field.type.rawValue) field", field: field.name)
        }
    }

    /// A `timestamptz` (microseconds since 2000-01-01) as the `Date` every site makes of those
    /// microseconds (``Foundation/Date/init(microsecondsSince1970:)``).
    private static func date(_ cell: PostgresCell) throws -> Date {
        guard cell.format == .binary, cell.dataType == .timestamptz || cell.dataType == .timestamp,
              var bytes = cell.bytes, bytes.readableBytes == 8, let microseconds = bytes.readInteger(as: Int64.self) else {
            return try cell.decode(Date.self).roundedToMicroseconds
        }
        let (since1970, overflow) = microseconds.addingReportingOverflow(Timestamp.microsecondsFrom1970To2000)
        return overflow ? Date(timeIntervalSince1970: Double(microseconds) / 1_000_000 + 946_684_800) : Date(microsecondsSince1970: since1970)
    }

    /// A date bound as a `timestamptz` of its exact microseconds. (postgres-nio's own encoding of
    /// a `Date` truncates through a `Double`: `.123` would be stored as `.122999`.)
    struct Timestamp: PostgresNonThrowingEncodable {
        static let microsecondsFrom1970To2000: Int64 = 946_684_800_000_000
        static var psqlType: PostgresDataType { .timestamptz }
        static var psqlFormat: PostgresFormat { .binary }
        let microsecondsSince2000: Int64

        init(_ date: Date) {
            let (since2000, overflow) = date.microsecondsSince1970.subtractingReportingOverflow(Self.microsecondsFrom1970To2000)
            microsecondsSince2000 = overflow ? .min : since2000
        }

        func encode<JSONEncoder: PostgresJSONEncoder>(into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
            byteBuffer.writeInteger(microsecondsSince2000)
        }
    }

    /// The database's refusal as a ``SQLError``: SQLSTATE class 23 is a constraint.
    static func sqlError(_ error: PSQLError) -> SQLError {
        let state = error.serverInfo?[.sqlState] ?? ""
        let message = error.serverInfo?[.message] ?? "\(error.code)"
        // 57014: canceled by statement_timeout (the only cancel Relata asks for).
        if state == "57014" { return SQLError(.timeLimitExceeded, message) }
        // 40001: serialization failure; 40P01: deadlock detected. Either way, the transaction may run again.
        if state == "40001" || state == "40P01" { return SQLError(.serializationFailure, message) }
        if isConnectionLost(error) { return SQLError(.unavailable, "the connection to PostgreSQL closed (\(message))") }
        return SQLError(state.hasPrefix("23") ? .constraint : .other, message)
    }

    /// Whether the error says the connection itself is gone: PostgreSQL ended the session (57P…:
    /// an administrator, a shutdown) or the connection closed under the statement.
    static func isConnectionLost(_ error: PSQLError) -> Bool {
        switch error.code {
        case .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .connectionError: true
        default: (error.serverInfo?[.sqlState] ?? "").hasPrefix("57P")
        }
    }
}
