// Small applies from 64 concurrent clients spread over 1, 2 and 3 `relata serve` processes
// on one PostgreSQL database: does throughput grow with instances, and what limits it?
import Foundation
import Relata
import RelataServer

/// A `relata serve` process for the length of a measurement.
final class ServeProcess {
    let process = Process()
    let port: Int

    init(binary: URL, arguments: [String]) throws {
        process.executableURL = binary
        process.arguments = ["serve"] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Its first line says where it listens: "serving Bench on http://127.0.0.1:PORT …".
        var line = Data()
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte == Data("\n".utf8) { break }
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let range = text.range(of: #"127\.0\.0\.1:(\d+)"#, options: .regularExpression),
              let port = Int(text[range].split(separator: ":").last ?? "") else {
            process.terminate()
            throw RelataError(.invalidResponse, "relata serve did not start: \(text)")
        }
        self.port = port
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}

/// CPU time (user + system) of processes, read from /proc.
enum ProcessCPU {
    static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// Seconds of CPU a process has used.
    static func seconds(of pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return 0 }
        // After "pid (comm) ": state is field 3; utime and stime are fields 14 and 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / ticksPerSecond
    }

    /// CPU seconds of every process whose command is `name`, by process id.
    static func snapshot(named name: String) -> [Int32: Double] {
        Dictionary(uniqueKeysWithValues: pids(named: name).map { ($0, seconds(of: $0)) })
    }

    /// The processes whose command is `name`.
    static func pids(named name: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter {
            (try? String(contentsOfFile: "/proc/\($0)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) == name
        }
    }
}

/// Runs the part; `rows` is the size of the Items table the applies pick their rows from.
func runInstancesBenchmark(store: PostgresBenchStore, rows: Int, folder: URL) async throws {
    let binary = URL(fileURLWithPath: ProcessInfo.processInfo.environment["RELATA_BINARY"] ?? ".build/release/relata")
    guard FileManager.default.isExecutableFile(atPath: binary.path) else {
        print("instances: no relata binary at \(binary.path) — build it with `swift build -c release --product relata` or set RELATA_BINARY")
        return
    }
    // The Items table of the server benchmark (already seeded) with its rule, as a schema file.
    let schemaFolder = folder.appendingPathComponent("instances")
    try FileManager.default.createDirectory(at: schemaFolder, withIntermediateDirectories: true)
    try ItemTable.rules.write(to: schemaFolder.appendingPathComponent("items.js"), atomically: true, encoding: .utf8)
    try """
        {"name": "Bench", "updateOrder": ["Items"], "tables": [{"name": "Items", "script": "items.js", "fields": [
          {"name": "ItemId", "type": "integer", "primaryKey": true}, {"name": "Name", "type": "string", "size": 40},
          {"name": "Quantity", "type": "integer"}, {"name": "UnitPrice", "type": "float"}]}]}
        """.write(to: schemaFolder.appendingPathComponent("Bench.schema.json"), atomically: true, encoding: .utf8)
    let hash = ServerUser.hash(password: "bench", cost: 4)
    try #"[{"name": "bench", "passwordHash": "\#(hash)"}]"#.write(to: schemaFolder.appendingPathComponent("users.json"), atomically: true, encoding: .utf8)

    // One change of one row: the key's old value only, so no change conflicts with another
    // (the server reads the rest of the row for the rule); the Lua script fills in a row and a quantity.
    let change = DeltaChange(changeId: 1, type: .update, oldValues: ["ItemId": 999_999_991],
                             newValues: ["ItemId": 999_999_991, "Quantity": 999_999_992])
    let template = String(decoding: try DeltaJSON.encode([Delta(tableName: "Items", keyFields: ["ItemId"], loggedFields: ["ItemId", "Quantity"],
                                                                changes: [change])]), as: UTF8.self)
    func lua(token: String) -> String {
        Wrk.headers(token: token, accept: "application/json") + """

            local template = [==[\(template)]==]
            request = function()
              local body = template:gsub("999999991", tostring(math.random(1, \(rows))))
              body = body:gsub("999999992", tostring(math.random(1, 50)))
              return wrk.format(nil, nil, nil, body)
            end
            """
    }

    print("")
    print("| 64 clients, small applies (one row, one rule) for 10 s | applies/s | p50 | p99 | CPU: relata serve | CPU: PostgreSQL | CPU: wrk |")
    print("|---|---|---|---|---|---|---|")
    for count in 1...3 {
        let instances = try (0..<count).map { _ in
            try ServeProcess(binary: binary, arguments: [schemaFolder.appendingPathComponent("Bench.schema.json").path,
                                                          "--port", "0", "--database", store.url])
        }
        defer { for instance in instances { instance.stop() } }
        // One login serves every instance (sessions live in the database); check one apply resolves.
        let client = BenchClient(port: instances[0].port)
        let token = try await client.login()
        let probe = Data(template.replacingOccurrences(of: "999999991", with: "1").replacingOccurrences(of: "999999992", with: "7").utf8)
        let answer = try await BenchClient(port: instances[count - 1].port).post("/v2/DataService/UpdateData", body: probe, token: token)
        let probed = try DeltaJSON.decode(answer).first?.changes.first?.status
        precondition(probed == .resolved, "the probe apply failed: \(String(decoding: answer, as: UTF8.self))")

        let servers = instances.map(\.process.processIdentifier)
        let serversBefore = servers.map(ProcessCPU.seconds(of:)).reduce(0, +)
        let postgresBefore = ProcessCPU.snapshot(named: "postgres")
        // The 64 connections split over the instances, one wrk (one thread) per instance.
        let runs = try instances.enumerated().map { index, instance in
            try Wrk.start(url: "http://127.0.0.1:\(instance.port)/v2/DataService/UpdateData", script: lua(token: token), threads: 1,
                          connections: 64 / count + (index < 64 % count ? 1 : 0), seconds: 10)
        }
        let wrkPIDs = runs.map(\.process.processIdentifier)
        var wrkCPU = 0.0
        // wrk's own CPU, read just before it exits.
        try await Task.sleep(for: .seconds(9.8))
        wrkCPU = wrkPIDs.map(ProcessCPU.seconds(of:)).reduce(0, +)
        let results = runs.map { $0.finish() }
        let serversCPU = servers.map(ProcessCPU.seconds(of:)).reduce(0, +) - serversBefore
        // Backends started during the run count whole.
        let postgresCPU = ProcessCPU.snapshot(named: "postgres").reduce(0) { $0 + $1.value - (postgresBefore[$1.key] ?? 0) }
        let total = results.compactMap { Double($0.requestsPerSecond) }.reduce(0, +)
        func cores(_ seconds: Double) -> String { String(format: "%.2f cores", seconds / 10) }
        print("| \(count) instance\(count == 1 ? "" : "s") | \(String(format: "%.0f", total)) | \(results.map(\.p50).joined(separator: " / ")) | \(results.map(\.p99).joined(separator: " / ")) | \(cores(serversCPU)) | \(cores(postgresCPU)) | \(cores(wrkCPU)) |")
    }
}
