import Foundation
import Relata
import RelataScript

/// Reads the JSON files Relata's tools take (schemas, edits), with errors that
/// name the file and the place in it.
enum JSONFile {
    static func decode<T: Decodable>(_ type: T.Type, from url: URL, what: String, keys: KnownKeys) throws -> T {
        try decode(type, from: InputFile.data(at: url, what: what), name: url.path, what: what, keys: keys)
    }

    /// Decodes a file's JSON after checking it is UTF-8 and uses only `keys`.
    static func decode<T: Decodable>(_ type: T.Type, from data: Data, name: String, what: String, keys: KnownKeys) throws -> T {
        _ = try InputFile.text(of: data, what: what, location: name)
        do {
            if let unknown = keys.firstUnknownKey(in: try JSONDecoder().decode(JSONValue.self, from: data)) {
                throw RelataError(.invalidSchema, unknown, location: name)
            }
            return try JSONDecoder().decode(type, from: data)
        } catch let error as DecodingError {
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty, let syntax = JSONSyntax.error(in: data) {
                throw RelataError(.invalidSchema, "the \(what) is not valid JSON: \(syntax)", location: name)
            }
            throw RelataError(.invalidSchema, describe(error), location: name)
        } catch let error as RelataError {
            throw error
        } catch {
            throw RelataError(.invalidSchema, "\(error)", location: name)
        }
    }

    /// `tables[2].fields[1].type: 'strng' is not …`: where in the document, then what is wrong.
    static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            var text = ""
            for key in keys {
                if let index = key.intValue { text += "[\(index)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
            }
            return text
        }
        func at(_ keys: [any CodingKey], _ message: String) -> String {
            keys.isEmpty ? message : "\(path(keys)): \(message)"
        }
        switch error {
        case .keyNotFound(let key, let context):
            return at(context.codingPath, "'\(key.stringValue)' is missing")
        case .typeMismatch(let type, let context):
            return at(context.codingPath, "expected \(describe(type)) (\(context.debugDescription))")
        case .valueNotFound(let type, let context):
            return at(context.codingPath, "expected \(describe(type)), found null")
        case .dataCorrupted(let context):
            if let underlying = context.underlyingError as NSError?, context.codingPath.isEmpty {
                return "not valid JSON: \(underlying.userInfo[NSDebugDescriptionErrorKey] ?? underlying.localizedDescription)"
            }
            return at(context.codingPath, context.debugDescription)
        @unknown default:
            return "\(error)"
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Bool.Type: return "true or false"
        case is Int.Type, is Int64.Type, is Double.Type: return "a number"
        case is [Any].Type: return "an array"
        default: return "\(type)".hasPrefix("Array") ? "an array" : "an object"
        }
    }
}
