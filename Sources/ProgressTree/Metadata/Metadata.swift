/// The descriptive data of a node, guarded by the node's lock.
///
/// Everything a user sets through `userInfo`, `setUserInfoObject(_:forKey:)` and the typed properties
/// (`fileURL`, `throughput`, …) lives in the one `userInfo` dictionary, so the keys and the typed
/// properties always agree. `kind` and the description overrides are separate fields, as in Foundation
/// (they have no user-info key).
///
/// Kept small and free of reference counts beyond the dictionary, because every node carries one and
/// creating nodes is on the path of short-lived work: the rarely used parts live in `MetadataExtras`,
/// allocated the first time one of them is set or an estimate is read.
struct Metadata {
    /// Written only through `setUserInfoValue(_:forKey:)` and `replaceUserInfo(_:)`, which keep `fileCounts`
    /// what the file count keys hold.
    private(set) var userInfo: [ProgressNode.UserInfoKey: any Sendable] = [:]
    /// `kind` without a reference count: 0 for `nil`, 1 for `.file`, 2 for another kind (kept in `extras`).
    private var kindCode: UInt8 = 0
    /// The file counts `userInfo` holds, as `ProgressNode.fileCount(in:)` reads them (`nil` in a field: not
    /// set, or not usable); `nil` when neither key was ever stored. Kept with each write of either key, so
    /// that the summaries read no dictionary (a root's first read of 100,000 files would hash 200,000 keys).
    private(set) var fileCounts: (total: Int?, completed: Int?)?
    /// The rarely used parts; `nil` until first needed.
    private(set) var extras: MetadataExtras?

    /// The extras, allocated on first use.
    mutating func extrasForWriting() -> MetadataExtras {
        if let extras { return extras }
        let created = MetadataExtras()
        extras = created
        return created
    }

    var kind: ProgressNode.Kind? {
        get {
            switch kindCode {
            case 0: nil
            case 1: .file
            default: extras?.customKind
            }
        }
        set {
            switch newValue {
            case nil: kindCode = 0
            case .file?: kindCode = 1
            case let custom?:
                kindCode = 2
                extrasForWriting().customKind = custom
            }
        }
    }

    /// Sets the value for `key`, or removes it when `value` is `nil`; returns the value replaced.
    mutating func setUserInfoValue(
        _ value: (any Sendable)?, forKey key: ProgressNode.UserInfoKey
    ) -> (any Sendable)? {
        let replaced = value.map { userInfo.updateValue($0, forKey: key) } ?? userInfo.removeValue(forKey: key)
        if key == .fileTotalCountKey || key == .fileCompletedCountKey { readFileCounts() }
        return replaced
    }

    /// Replaces the whole dictionary.
    mutating func replaceUserInfo(_ values: [ProgressNode.UserInfoKey: any Sendable]) {
        userInfo = values
        fileCounts = nil
        if Self.describesFiles(values) { readFileCounts() }
    }

    /// Reads the file count keys into `fileCounts`.
    private mutating func readFileCounts() {
        fileCounts = (
            ProgressNode.fileCount(in: userInfo[.fileTotalCountKey]),
            ProgressNode.fileCount(in: userInfo[.fileCompletedCountKey])
        )
    }

    /// Whether `userInfo` holds a file count key: a node created with it describes files from the start
    /// (`NodeFlags.summarized`).
    static func describesFiles(_ userInfo: [ProgressNode.UserInfoKey: any Sendable]?) -> Bool {
        guard let userInfo else { return false }
        return userInfo[.fileTotalCountKey] != nil || userInfo[.fileCompletedCountKey] != nil
    }

    /// Whether the metadata describes files now: kind `.file`, or a file count key may be stored.
    var describesFiles: Bool { isFile || fileCounts != nil }

    /// Whether the node is of kind `.file`, without building a `Kind`.
    var isFile: Bool { kindCode == 1 }

    /// Set by `localizedDescription = …`; `nil` means "use the default".
    var localizedDescriptionOverride: String? {
        get { extras?.localizedDescriptionOverride }
        set { setExtra(\.localizedDescriptionOverride, to: newValue) }
    }

    /// Set by `localizedAdditionalDescription = …`; `nil` means "use the default".
    var localizedAdditionalDescriptionOverride: String? {
        get { extras?.localizedAdditionalDescriptionOverride }
        set { setExtra(\.localizedAdditionalDescriptionOverride, to: newValue) }
    }

    /// Sets a field of the extras, allocating them only for a value (a `nil` is what no extras read).
    private mutating func setExtra(_ field: ReferenceWritableKeyPath<MetadataExtras, String?>, to value: String?) {
        if value == nil && extras == nil { return }
        extrasForWriting()[keyPath: field] = value
    }
}
