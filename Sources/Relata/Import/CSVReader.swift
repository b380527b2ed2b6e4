/// Reads RFC 4180 CSV: fields separated by commas, optionally quoted with `"`
/// (a quote inside is doubled), line breaks inside quotes allowed.
/// An unquoted empty cell is nil (NULL); a quoted empty cell is "".
struct CSVReader {
    struct Record {
        let line: Int
        let cells: [String?]
    }

    /// Splits text into records, each with the line it starts on.
    static func records(in text: String, separator: Character = ",") throws(CSVError) -> [Record] {
        var records: [Record] = []
        var cells: [String?] = []
        var cell = ""
        var quoted = false
        var inQuotes = false
        var line = 1
        var recordLine = 1
        var iterator = text.makeIterator()
        var pending: Character? = iterator.next()

        func endCell() {
            cells.append(quoted || !cell.isEmpty ? cell : nil)
            cell = ""
            quoted = false
        }
        func endRecord() {
            endCell()
            if !(cells.count == 1 && cells[0] == nil) { records.append(Record(line: recordLine, cells: cells)) }
            cells = []
        }

        while let character = pending {
            pending = iterator.next()
            if inQuotes {
                if character == "\"" {
                    if pending == "\"" {
                        cell.append("\"")
                        pending = iterator.next()
                    } else {
                        inQuotes = false
                    }
                } else {
                    if character == "\n" || character == "\r\n" { line += 1 }
                    cell.append(character)
                }
                continue
            }
            switch character {
            case "\"":
                guard cell.isEmpty && !quoted else {
                    throw CSVError(line: line, message: "a quote inside an unquoted cell; quote the whole cell and double the quote (\"\")")
                }
                quoted = true
                inQuotes = true
            case separator:
                endCell()
            case "\n", "\r\n", "\r":
                endRecord()
                line += 1
                recordLine = line
            default:
                if quoted {
                    throw CSVError(line: line, message: "text after a closing quote; a quoted cell must end at the separator")
                }
                cell.append(character)
            }
        }
        if inQuotes { throw CSVError(line: recordLine, message: "a quoted cell is not closed") }
        if !cell.isEmpty || quoted || !cells.isEmpty { endRecord() }
        return records
    }

    /// Quotes a cell when it needs it; the empty string is quoted so it does not read back as NULL.
    static func escape(_ text: String, separator: Character = ",") -> String {
        guard text.contains(where: { $0 == separator || $0 == "\"" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) || text.isEmpty else {
            return text
        }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

struct CSVError: Error {
    let line: Int
    let message: String
}
