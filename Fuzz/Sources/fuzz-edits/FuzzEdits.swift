import Foundation
import FuzzSupport
import RelataScript
import RelataTools

/// Edits files: parsed, then each edit's summary made (as `relata run` shows it).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEdits(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let edits = try? Edit.list(json: fuzzData(start, count), name: "fuzz.json") else { return 0 }
    _ = edits.map(\.summary)
    return 0
}
