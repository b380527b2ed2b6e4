import Foundation
import Logging
import Relata
import RelataServer
import RelataTools

/// A file `relata serve` reloads while it runs: its watcher task asks every second.
protocol ServeWatch: Sendable {
    /// Reloads what the files hold when one changed since the last look; a file that does not
    /// load leaves what was loaded before, and the log says why.
    func reloadIfChanged(logger: Logger)
}

/// The modification dates of files, compared between looks.
struct FileStamps: Equatable {
    private let dates: [String: Date]

    init(of files: [URL]) {
        var dates: [String: Date] = [:]
        for file in files {
            dates[file.path] = (try? FileManager.default.attributesOfItem(atPath: file.path)[.modificationDate] as? Date) ?? .distantPast
        }
        self.dates = dates
    }
}

/// A served schema whose rule scripts reload when its files change (tables never do while serving).
final class RulesWatch: ServeWatch, @unchecked Sendable {
    // @unchecked Sendable: `stamps` is only touched by the one watcher task, one call at a time.
    let schemaFile: URL
    let service: DataService
    private var stamps: FileStamps

    init(schemaFile: URL, service: DataService) {
        self.schemaFile = schemaFile
        self.service = service
        stamps = Self.stamps(of: schemaFile)
    }

    func reloadIfChanged(logger: Logger) {
        let now = Self.stamps(of: schemaFile)
        guard now != stamps else { return }
        stamps = now
        do {
            let definition = try Schema(contentsOf: schemaFile).definition()
            if try service.reloadRules(from: definition) {
                logger.audit(.rulesReloaded, "reloaded the rules of \(definition.name) (version \(definition.version.prefix(19))…)",
                             metadata: ["schema": .string(definition.name)])
            }
        } catch {
            logger.audit(.rulesReloadFailed, "the rules of \(schemaFile.path) were not reloaded, the previous ones stay: \(describe(error))", level: .error)
        }
    }

    /// The schema file and every script it names.
    private static func stamps(of schemaFile: URL) -> FileStamps {
        var files = [schemaFile]
        if let schema = try? Schema(contentsOf: schemaFile) { files += schema.scriptFiles }
        return FileStamps(of: files)
    }
}

/// A users file that reloads when it changes: a user removed or given other roles there loses his
/// sessions at the server's next check of them (every few seconds).
final class UsersWatch: ServeWatch, @unchecked Sendable {
    // @unchecked Sendable: `stamps` is only touched by the one watcher task, one call at a time.
    let usersFile: URL
    let place: String
    let provider: StaticUsers
    private var stamps: FileStamps

    /// - Parameter place: what the users are for, for the log (`domain shop`, `the server`).
    init(usersFile: URL, place: String, provider: StaticUsers) {
        self.usersFile = usersFile
        self.place = place
        self.provider = provider
        stamps = FileStamps(of: [usersFile])
    }

    func reloadIfChanged(logger: Logger) {
        let now = FileStamps(of: [usersFile])
        guard now != stamps else { return }
        stamps = now
        do {
            let users = try ServeCommand.serverUsers(ServerConfigFile.users(contentsOf: usersFile))
            provider.replace(with: users)
            logger.audit(.usersReloaded, "reloaded the users of \(place) from \(usersFile.path) (\(users.count) users)")
        } catch {
            logger.audit(.usersReloadFailed, "the users of \(place) were not reloaded from \(usersFile.path), the previous ones stay: \(describe(error))", level: .error)
        }
    }
}
