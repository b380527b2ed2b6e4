// A child process for the briefcase crash test: saves generation 1, 2, 3, … of
// a briefcase to PATH without end, printing each number once its save is done.
// The test kills it at random moments and checks that PATH still holds one
// whole generation.
//
//     relata-briefcase-writer PATH ROWS file|folder
import Foundation
import Relata

let arguments = CommandLine.arguments
guard arguments.count == 4, let rows = Int(arguments[2]), ["file", "folder"].contains(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: relata-briefcase-writer PATH ROWS file|folder\n".utf8))
    exit(2)
}
let url = URL(fileURLWithPath: arguments[1])
let layout: Briefcase.Layout = arguments[3] == "file" ? .file : .folder

var generation = 1
while true {
    let briefcase = try BriefcaseFixture.make(generation: generation, rows: rows)
    try briefcase.save(to: url, layout: layout)
    FileHandle.standardOutput.write(Data("\(generation)\n".utf8))
    generation += 1
}
