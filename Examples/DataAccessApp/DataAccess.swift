import Foundation
import Logging
import Relata
import RelataRemote

/// What the app shows its user, and how it asks for a login (the original's `DataAccessDelegate`).
@MainActor protocol DataAccessDelegate: AnyObject {
    func alertError(_ message: String)
    func needLogin(after refusal: String?) async -> RemoteCredentials?
}

/// The bridge between the app and the data server, as seed 004's `DataAccess`: it logs in,
/// downloads the data or loads it from a briefcase, exposes the tables, saves them offline
/// and applies the user's changes. One shared instance, used from the main actor.
@MainActor final class DataAccess {
    /// Posted when the data is there (``dataReady``).
    static let dataReadyNotification = Notification.Name("DataAccess.dataReady")
    /// Posted when ``busy`` changes.
    static let busyStatusChangeNotification = Notification.Name("DataAccess.busyStatusChange")

    /// Bump it when a new version of the app needs fresh data: older briefcases are then not loaded.
    static let briefcaseDataVersion = "1"
    static let briefcaseDataVersionKey = "DataAccessApp.BriefcaseVersion"

    /// The shared instance, for the server in `RELATA_SERVER` (the local `relata serve` by default).
    static let shared = DataAccess(
        serverURL: URL(string: ProcessInfo.processInfo.environment["RELATA_SERVER"] ?? "http://127.0.0.1:7099") ?? URL(fileURLWithPath: "/"),
        homeFolder: URL(fileURLWithPath: ProcessInfo.processInfo.environment["DATA_ACCESS_HOME"]
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("DataAccessApp").path))

    weak var delegate: DataAccessDelegate?
    /// Where the briefcase lives.
    let homeFolder: URL
    /// True once the data is loaded.
    private(set) var dataReady = false
    /// True while the class talks to the server.
    private(set) var busy = false {
        didSet { if busy != oldValue { NotificationCenter.default.post(name: Self.busyStatusChangeNotification, object: self) } }
    }
    let adapter: RemoteDataAdapter
    var briefcaseURL: URL { homeFolder.appendingPathComponent("DataAccessApp.briefcase") }

    init(serverURL: URL, homeFolder: URL) {
        self.homeFolder = homeFolder
        var rulesLog = Logger(label: "DataAccessApp.rules")
        rulesLog.logLevel = .warning   // the rules' log(…) lines stay quiet unless they warn
        adapter = RemoteDataAdapter(targetURL: serverURL, dataService: "DataService.PCTrade", logger: rulesLog)
        adapter.delegate = self
    }

    var clients: DataTable? { adapter.table(named: "Clients") }
    var orders: DataTable? { adapter.table(named: "Orders") }
    var orderDetails: DataTable? { adapter.table(named: "OrderDetails") }

    /// Loads the data: from the briefcase when there is one of the current data version, otherwise
    /// from the server; then sets it up and says the data is ready.
    /// - Returns: where the data came from.
    @discardableResult
    func loadInitialData() async -> String? {
        busy = true
        defer { busy = false }
        do {
            let source: String
            if let briefcase = try loadBriefcase() {
                try adapter.load(briefcase)
                source = "briefcase"
            } else {
                try await downloadData()
                source = "server"
            }
            try setupData()
            triggerDataReady()
            return source
        } catch let error as RemoteError where error.code == RemoteError.networkCode {
            delegate?.alertError("the server at \(adapter.targetURL.absoluteString) is unreachable, and there is no briefcase to start from: \(error.message)")
            return nil
        } catch {
            delegate?.alertError("the data could not be loaded: \(error)")
            return nil
        }
    }

    /// The tables the app works with, from the server.
    func downloadData() async throws {
        _ = try await adapter.getDataTables(["Clients", "Providers", "Products", "Orders", "OrderDetails"].map { DataRequest(table: $0) })
    }

    /// The briefcase, when there is one of the current data version.
    private func loadBriefcase() throws -> Briefcase? {
        guard FileManager.default.fileExists(atPath: briefcaseURL.path) else { return nil }
        let briefcase = try Briefcase(contentsOf: briefcaseURL)
        return briefcase.properties[Self.briefcaseDataVersionKey] == Self.briefcaseDataVersion ? briefcase : nil
    }

    /// The schema's own calculated and lookup fields come with its rules; the app adds its own here.
    private func setupData() throws {
        guard let orders, orders.field(named: "Lines") == nil, !orders.virtualFieldNames.contains("Lines") else { return }
        let details = orderDetails
        try orders.addCalculatedField(name: "Lines", type: .integer) { row in
            .integer(Int64((try? details?.rows(where: "OrderId = :id", parameters: ["id": row["OrderId"]]).count) ?? 0))
        }
    }

    private func triggerDataReady() {
        dataReady = true
        NotificationCenter.default.post(name: Self.dataReadyNotification, object: self)
    }

    /// Saves the tables, pending changes included, to the briefcase.
    func saveData() throws {
        try FileManager.default.createDirectory(at: homeFolder, withIntermediateDirectories: true)
        let briefcase = try adapter.makeBriefcase()
        briefcase.properties[Self.briefcaseDataVersionKey] = Self.briefcaseDataVersion
        try briefcase.save(to: briefcaseURL)
    }

    /// Saves when the main actor is next free, without holding up the caller. (The tables live on
    /// the main actor, so the save runs there too, at background priority.)
    func saveDataInBackground() {
        Task(priority: .background) { @MainActor in
            do { try saveData() } catch { delegate?.alertError("the briefcase could not be saved: \(error)") }
        }
    }

    /// Applies every pending change to the server; saves the briefcase afterwards.
    @discardableResult
    func beginApplyUpdates() -> AsyncRequest<[Delta]>? {
        guard !busy else { return nil }
        busy = true
        let request = adapter.beginApplyChanges(for: adapter.tables.filter(\.hasChanges), start: false)
        request.context = "apply updates"
        request.completion = { [weak self] _, _ in
            self?.busy = false
            self?.saveDataInBackground()
        }
        request.failure = { [weak self] error, _ in
            self?.busy = false
            self?.delegate?.alertError("the changes were not applied: \(error)")
        }
        request.start()
        return request
    }
}

extension DataAccess: @MainActor RemoteDataAdapterDelegate {
    @MainActor func remoteDataAdapter(_ adapter: RemoteDataAdapter, needsLoginAfter refusal: RemoteError?, attempt: Int) async -> RemoteCredentials? {
        guard let delegate else { return nil }
        return await delegate.needLogin(after: refusal?.message)
    }

    func remoteDataAdapter(_ adapter: RemoteDataAdapter, didFailChange change: DeltaChange, of table: DataTable) {
        delegate?.alertError("\(table.name): change \(change.changeId) failed: \(change.message ?? "")")
    }
}
