import Foundation

/// `Value` encodes as a single-key object naming its case, so that every type
/// survives a round trip through JSON: `{"integer": 5}`, `{"string": "Acme"}`,
/// `{"date": "2024-03-01T10:00:00Z"}`, `{"decimal": "12.50"}`,
/// `{"guid": "…"}`, `{"blob": "<base64>"}`; NULL is `null`.
extension Value: Codable {
    private enum Tag: String, CodingKey {
        case integer, double, decimal, boolean, string, date, guid, blob
    }

    public init(from decoder: any Decoder) throws {
        if let single = try? decoder.singleValueContainer(), single.decodeNil() {
            self = .null
            return
        }
        let container = try decoder.container(keyedBy: Tag.self)
        guard let tag = container.allKeys.first, container.allKeys.count == 1 else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                debugDescription: "a Value is null or an object with exactly one of the keys integer, double, decimal, boolean, string, date, guid, blob"))
        }
        switch tag {
        case .integer: self = .integer(try container.decode(Int64.self, forKey: tag))
        case .double: self = .double(try container.decode(Double.self, forKey: tag))
        case .boolean: self = .boolean(try container.decode(Bool.self, forKey: tag))
        case .string: self = .string(try container.decode(String.self, forKey: tag))
        case .guid: self = .guid(try container.decode(UUID.self, forKey: tag))
        case .date where (try? container.decode(Double.self, forKey: tag)) != nil:
            self = .date(Date(timeIntervalSince1970: try container.decode(Double.self, forKey: tag)).roundedToMicroseconds)
        case .decimal, .date, .blob:
            let text = try container.decode(String.self, forKey: tag)
            let type: DataType = tag == .decimal ? .decimal : tag == .date ? .dateTime : .blob
            do {
                self = try type.parse(text)
            } catch {
                throw DecodingError.dataCorruptedError(forKey: tag, in: container, debugDescription: error.message)
            }
        }
    }

    public func encode(to encoder: any Encoder) throws {
        if case .null = self {
            var single = encoder.singleValueContainer()
            try single.encodeNil()
            return
        }
        var container = encoder.container(keyedBy: Tag.self)
        switch self {
        case .null: break
        case .integer(let value): try container.encode(value, forKey: .integer)
        case .double(let value): try container.encode(value, forKey: .double)
        case .decimal(let value): try container.encode(value.description, forKey: .decimal)
        case .boolean(let value): try container.encode(value, forKey: .boolean)
        case .string(let value): try container.encode(value, forKey: .string)
        case .date(let value):
            // ISO 8601, exact: as many fractional digits as the date needs.
            try container.encode(ISO8601.string(from: value), forKey: .date)
        case .guid(let value): try container.encode(value, forKey: .guid)
        case .blob(let value): try container.encode(value.base64EncodedString(), forKey: .blob)
        }
    }
}
