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
    /// Written only through `setUserInfoValue(_:forKey:)` and `replaceUserInfo(_:)`, which keep
    /// `hasFileCountKeys` true whenever a file count key is in it.
    private(set) var userInfo: [ProgressNode.UserInfoKey: any Sendable] = [:]
    /// `kind` without a reference count: 0 for `nil`, 1 for `.file`, 2 for another kind (kept in `extras`).
    private var kindCode: UInt8 = 0
    /// Whether `userInfo` may hold `.fileTotalCountKey` or `.fileCompletedCountKey`: false guarantees it
    /// holds neither, so a file summary skips two hashed lookups per node (a root's first read computes
    /// 100,000 of them). Set when either key is stored, cleared when the dictionary is replaced by one
    /// without them; never cleared by removing a key (it then only costs the lookups).
    private(set) var hasFileCountKeys = false
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
        guard let value else { return userInfo.removeValue(forKey: key) }
        if key == .fileTotalCountKey || key == .fileCompletedCountKey { hasFileCountKeys = true }
        return userInfo.updateValue(value, forKey: key)
    }

    /// Replaces the whole dictionary.
    mutating func replaceUserInfo(_ values: [ProgressNode.UserInfoKey: any Sendable]) {
        userInfo = values
        hasFileCountKeys = values[.fileTotalCountKey] != nil || values[.fileCompletedCountKey] != nil
    }

    /// Whether a node created with `userInfo` describes files from the start (`NodeFlags.summarized`).
    static func describesFiles(_ userInfo: [ProgressNode.UserInfoKey: any Sendable]?) -> Bool {
        guard let userInfo else { return false }
        return userInfo[.fileTotalCountKey] != nil || userInfo[.fileCompletedCountKey] != nil
    }

    /// Whether the metadata describes files now: kind `.file`, or a file count key may be stored.
    var describesFiles: Bool { isFile || hasFileCountKeys }

    /// The value of a file count key, or `nil` without a lookup when none was stored.
    func fileCountValue(_ key: ProgressNode.UserInfoKey) -> (any Sendable)? {
        hasFileCountKeys ? userInfo[key] : nil
    }

    /// Whether the node is of kind `.file`, without building a `Kind`.
    var isFile: Bool { kindCode == 1 }

    /// Set by `localizedDescription = …`; `nil` means "use the default".
    var localizedDescriptionOverride: String? {
        get { extras?.localizedDescriptionOverride }
        set {
            if newValue == nil && extras == nil { return }
            extrasForWriting().localizedDescriptionOverride = newValue
        }
    }

    /// Set by `localizedAdditionalDescription = …`; `nil` means "use the default".
    var localizedAdditionalDescriptionOverride: String? {
        get { extras?.localizedAdditionalDescriptionOverride }
        set {
            if newValue == nil && extras == nil { return }
            extrasForWriting().localizedAdditionalDescriptionOverride = newValue
        }
    }
}
