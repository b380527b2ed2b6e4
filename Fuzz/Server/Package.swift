// swift-tools-version:6.1
// The data server's libFuzzer target, in a package of its own: it links the server (Hummingbird,
// NIO, GRDB, postgres-nio), which the other targets (Fuzz/) do not need to build.
// `Scripts/fuzz.sh update-data [SECONDS]` builds and runs it (see Documentation/Fuzzing.md).
import PackageDescription

let package = Package(
    name: "RelataServerFuzz",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "Relata", path: "../.."),
        .package(name: "RelataFuzz", path: ".."),
    ],
    targets: [
        .executableTarget(name: "fuzz-update-data", dependencies: [
            .product(name: "Relata", package: "Relata"),
            .product(name: "RelataServer", package: "Relata"),
            .product(name: "FuzzSupport", package: "RelataFuzz"),
        ], swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
    ],
    swiftLanguageModes: [.v6]
)
