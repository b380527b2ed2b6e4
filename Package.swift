// swift-tools-version:6.1
import PackageDescription

/// `RELATA_RULES_ONLY=1` leaves the package the rule engine, its tooling and their tests — no
/// server half and none of its dependencies — for the address-sanitizer stage of
/// `Scripts/test.sh`, which would otherwise build NIO, BoringSSL and the rest a second time
/// only to test the rules.
let rulesOnly = Context.environment["RELATA_RULES_ONLY"] != nil
let rulesTargets: Set<String> = [
    "Relata", "CJavaScriptCore", "CRelataProcess", "RelataScript", "RelataTools", "RelataTestSupport",
    "RelataScriptTests", "RelataToolsTests",
]
let swiftLog: Package.Dependency = .package(url: "https://github.com/apple/swift-log", from: "1.16.0")

let package = Package(
    name: "Relata",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "Relata", targets: ["Relata"]),
        .library(name: "RelataScript", targets: ["RelataScript"]),
        .library(name: "RelataTools", targets: ["RelataTools"]),
        .library(name: "RelataTesting", targets: ["RelataTesting"]),
        .library(name: "RelataServer", targets: ["RelataServer"]),
        .library(name: "RelataRemote", targets: ["RelataRemote"]),
        .executable(name: "relata", targets: ["relata"]),
    ],
    dependencies: rulesOnly ? [swiftLog] : [
        swiftLog,
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.81.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
        // Already in the graph through postgres-nio: TLS to PostgreSQL (`sslmode`).
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.0"),
        // Already in the graph through postgres-nio: SHA-256 in hardware for the apply's fingerprint.
        .package(url: "https://github.com/apple/swift-crypto", "3.9.0" ..< "6.0.0"),
        // Already a dependency of Hummingbird: the server's bounded graceful shutdown.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        // Already in the graph through Hummingbird: the server's metrics; shown at /metrics by swift-prometheus.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.0"),
        // The client's HTTP on Linux (on swift-nio and swift-nio-ssl, which the server already builds):
        // swift-corelibs-foundation's URLSession keeps a core busy while it waits for an answer.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        // The core model: values, fields, tables, rows, deltas, expressions. Foundation only.
        .target(name: "Relata"),
        // JavaScriptCore's C API (WebKitGTK on Linux, the system framework on Apple platforms).
        .systemLibrary(name: "CJavaScriptCore", pkgConfig: "javascriptcoregtk-4.1",
                       providers: [.apt(["libjavascriptcoregtk-4.1-dev"])]),
        // Sets JavaScriptCore's process-wide options when the program loads, before any thread exists.
        .target(name: "CRelataProcess"),
        // The rule runtime: the JavaScript engine, rules, the delta processor, the LocalDataAdapter.
        .target(name: "RelataScript", dependencies: [
            "Relata",
            "CJavaScriptCore",
            "CRelataProcess",
            .product(name: "Logging", package: "swift-log"),
        ], resources: [
            // The rule environment (UTC dates) JavaScriptCore and the JavaScript client both run.
            .embedInCode("Engine/Environment"),
        ], linkerSettings: [
            .linkedLibrary("javascriptcoregtk-4.1", .when(platforms: [.linux])),
            .linkedFramework("JavaScriptCore", .when(platforms: [.macOS, .iOS])),
        ]),
        // Tooling over the runtime: schema files, edits files, the rule test runner, the checker,
        // TypeScript declarations. Servers and apps need only RelataScript.
        .target(name: "RelataTools", dependencies: [
            "Relata", "RelataScript", "CJavaScriptCore",
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The client: the RemoteDataAdapter over the protocol (URLSession; AsyncHTTPClient on Linux), with the rule runtime
        // validating changes before they are sent. Links neither the server nor the tooling.
        .target(name: "RelataRemote", dependencies: [
            "Relata", "RelataScript", .product(name: "Logging", package: "swift-log"),
            .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(platforms: [.linux])),
            .product(name: "NIOCore", package: "swift-nio", condition: .when(platforms: [.linux])),
            .product(name: "NIOPosix", package: "swift-nio", condition: .when(platforms: [.linux])),
            .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(platforms: [.linux])),
        ], swiftSettings: [
            // Async functions and closures run on their caller's actor unless marked @concurrent:
            // the adapter's tables never leave the isolation that uses them.
            .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
        ]),
        // The data server: the rule runtime over SQL (SQLite through GRDB, PostgreSQL through postgres-nio), its services, and
        // the HTTP protocol (Hummingbird). Only the server and the CLI link it.
        .target(name: "RelataServer", dependencies: [
            "Relata", "RelataScript",
            .product(name: "GRDB", package: "GRDB.swift"), .product(name: "GRDBSQLite", package: "GRDB.swift"),
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "CoreMetrics", package: "swift-metrics"),
            .product(name: "Prometheus", package: "swift-prometheus"),
        ], resources: [
            // The web console and the JavaScript client (Clients/JavaScript, linked here), built into the binary.
            .embedInCode("Web/Files"),
        ]),
        // Assertions on rule outcomes for the users' own XCTest and Swift Testing suites.
        .target(name: "RelataTesting", dependencies: ["Relata", "RelataScript", "RelataTools"]),
        // The command line: run, test and check rules, TypeScript declarations.
        .executableTarget(name: "relata", dependencies: [
            "Relata", "RelataScript", "RelataTools", "RelataServer", "RelataRemote",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The README's five-minute tour, compiled so it cannot rot; `Scripts/demo.sh` runs it.
        .executableTarget(name: "relata-tour", dependencies: ["Relata"], path: "Examples/Tour"),
        // Business rules on the same table; `Scripts/demo.sh` runs it after the tour.
        .executableTarget(name: "relata-rules-demo", dependencies: [
            "Relata", "RelataScript", .product(name: "Logging", package: "swift-log"),
        ], path: "Examples/RulesDemo"),
        // Seed 004's DataAccess pattern over the RemoteDataAdapter, as a console app; the README says how to run it.
        .executableTarget(name: "relata-data-access", dependencies: [
            "Relata", "RelataScript", "RelataRemote", .product(name: "Logging", package: "swift-log"),
        ], path: "Examples/DataAccessApp"),
        .testTarget(name: "RelataTests", dependencies: ["Relata", "RelataTestSupport", "relata-briefcase-writer"]),
        // The child process the briefcase crash test kills while it saves.
        .executableTarget(name: "relata-briefcase-writer", dependencies: ["Relata"], path: "Tests/BriefcaseWriter"),
        // Tables and scripts the runtime and tooling tests share.
        .target(name: "RelataTestSupport", dependencies: [
            "Relata", "RelataScript", .product(name: "Logging", package: "swift-log"),
        ], path: "Tests/RelataTestSupport"),
        .testTarget(name: "RelataScriptTests", dependencies: ["RelataScript", "RelataTestSupport"]),
        .testTarget(name: "RelataToolsTests", dependencies: ["RelataTools", "RelataTestSupport"]),
        // The databases server tests run on: SQLite files, and PostgreSQL databases made on the
        // cluster RELATA_POSTGRES_URL names (Scripts/test.sh starts one).
        .target(name: "RelataServerTestSupport", dependencies: [
            "RelataServer", "RelataTestSupport", .product(name: "Logging", package: "swift-log"),
        ], path: "Tests/RelataServerTestSupport"),
        // Servers on loopback ports, reached with URLSession as any client would.
        .testTarget(name: "RelataServerTests", dependencies: [
            "RelataServer", "RelataTestSupport", "RelataServerTestSupport", .product(name: "GRDB", package: "GRDB.swift"),
        ]),
        // The client against real servers on loopback ports.
        .testTarget(name: "RelataRemoteTests", dependencies: [
            "RelataRemote", "RelataServer", "RelataTools", "RelataTestSupport", "RelataServerTestSupport",
        ]),
        // Runs the built `relata` binary and checks its output and exit status.
        .testTarget(name: "RelataCLITests", dependencies: [
            "relata", "relata-data-access", "RelataScript", "RelataTools", "RelataRemote", "RelataTestSupport", "RelataServerTestSupport",
        ]),
        .testTarget(name: "RelataTestingTests", dependencies: ["RelataTesting"]),
        // PCTrade's rules tested from Swift with RelataTesting, as a user's own test target would.
        .testTarget(name: "PCTradeRuleTests", dependencies: ["RelataTesting"], path: "Examples/PCTrade/Tests"),
    ],
    swiftLanguageModes: [.v6]
)

if rulesOnly {
    package.targets = package.targets.filter { rulesTargets.contains($0.name) }
    package.products = package.products.filter { product in product.name == "Relata" || product.name == "RelataScript" || product.name == "RelataTools" }
}
