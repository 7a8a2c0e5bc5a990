#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The user-info dictionary and the typed properties Foundation layers over it. One storage: each typed
// property reads and writes the value of its `UserInfoKey`, so `setUserInfoObject(url, forKey: .fileURLKey)`
// and `fileURL = url` are the same write.
//
// Every change here is announced by `metadataChanged(affectsFiles:parent:)` (ProgressNode+MetadataChange.swift),
// so observers of the descriptions (and of a parent's descriptions, which may aggregate this node's files)
// hear about it, and a parent's file summary counts a change of this node's files at once.

extension ProgressNode {
    /// The node's metadata as a dictionary: everything set with `setUserInfoObject(_:forKey:)`, the typed
    /// properties (`fileURL`, `throughput`, …) and `init(parent:userInfo:)`. **(Foundation)**
    ///
    /// It holds only values that were set: estimates made for you (`throughput` and
    /// `estimatedTimeRemaining` when not set) and subtree sums (`fileTotalCount` of a parent) are not in it.
    ///
    /// Thread safety: any thread; a copy read under the node's lock. Complexity: O(1) (copy on write).
    public var userInfo: [UserInfoKey: any Sendable] {
        state.withLock { $0.metadata.userInfo }
    }

    /// Sets the value for `key`, or removes it when `object` is `nil`. **(Foundation)**
    ///
    /// Values for the Foundation keys are read back by the typed properties when they have a usable type
    /// (see each property); a value of another type stays in `userInfo` but the typed property reads `nil`.
    ///
    /// Thread safety: any thread; observers of this node and its ancestors are notified.
    /// Complexity: O(1) amortized.
    public func setUserInfoObject(_ object: (any Sendable)?, forKey key: UserInfoKey) {
        // The old value leaves the lock before it is released: its deinit may be user code.
        let isFileCount = key == .fileTotalCountKey || key == .fileCompletedCountKey
        let (replaced, parent) = state.withLock { state in
            let replaced = state.metadata.setUserInfoValue(object, forKey: key)
            if isFileCount { noteDescribesFiles(state.metadata) }
            return (replaced, parentUnderOwnLock(state))
        }
        withExtendedLifetime(replaced) {}
        metadataChanged(affectsFiles: isFileCount, parent: parent)
    }

    /// What kind of work this node is; `.file` selects the file wording of the descriptions and makes the
    /// unit counts byte counts. `nil` (the default) is generic work. **(Foundation)**
    ///
    /// Thread safety: any thread. Complexity: O(1).
    public var kind: Kind? {
        get { state.withLock { $0.metadata.kind } }
        set {
            let (wasFile, isFile, parent) = state.withLock { state in
                let wasFile = state.metadata.isFile
                state.metadata.kind = newValue
                noteDescribesFiles(state.metadata)
                return (wasFile, state.metadata.isFile, parentUnderOwnLock(state))
            }
            metadataChanged(affectsFiles: wasFile != isFile, parent: parent)
        }
    }

    /// What is being done to the file(s): the verb of the description of a `.file` node. Stored under
    /// `.fileOperationKindKey` (a `FileOperationKind`, or its raw `String`). **(Foundation)**
    ///
    /// Thread safety: any thread. Complexity: O(1).
    public var fileOperationKind: FileOperationKind? {
        get { Self.operationKind(in: userInfoValue(.fileOperationKindKey)) }
        set { setUserInfoObject(newValue, forKey: .fileOperationKindKey) }
    }

    /// The file this node works on; its last path component names it in the description ("Downloading
    /// “photo.jpg”…"). Stored under `.fileURLKey` (a `URL`). **(Foundation)**
    ///
    /// Thread safety: any thread. Complexity: O(1).
    public var fileURL: URL? {
        get { userInfoValue(.fileURLKey) as? URL }
        set { setUserInfoObject(newValue, forKey: .fileURLKey) }
    }

    /// The number of files: the value set (under `.fileTotalCountKey`), or else, for a node with files
    /// below it, the number of files in its subtree (see `FileSummary`); `nil` otherwise. **(Foundation,
    /// plus the subtree default.)**
    ///
    /// Setting it stores an `Int`; setting `nil` removes it (the subtree sum shows again). A stored value
    /// that is negative or not an integer reads as not set.
    ///
    /// Thread safety: any thread. Complexity: O(1) when set; otherwise that of `fileSummary`.
    public var fileTotalCount: Int? {
        get { Self.fileCount(in: userInfoValue(.fileTotalCountKey)) ?? subtreeFileCounts()?.fileTotalCount }
        set { setUserInfoObject(newValue, forKey: .fileTotalCountKey) }
    }

    /// The number of files done: the value set (under `.fileCompletedCountKey`), or else, for a node with
    /// files below it, the number of finished files in its subtree; `nil` otherwise. **(Foundation, plus the
    /// subtree default.)**
    ///
    /// Thread safety: any thread. Complexity: O(1) when set; otherwise that of `fileSummary`.
    public var fileCompletedCount: Int? {
        get { Self.fileCount(in: userInfoValue(.fileCompletedCountKey)) ?? subtreeFileCounts()?.fileCompletedCount }
        set { setUserInfoObject(newValue, forKey: .fileCompletedCountKey) }
    }

    /// The speed of the work in bytes per second: the value set (under `.throughputKey`), or else an
    /// estimate, for a node whose subtree counts bytes (see `FileSummary`) while its work runs. **(Foundation,
    /// plus the estimate: Foundation leaves it to the creator.)**
    ///
    /// The estimate is the subtree's completed bytes per second, smoothed (`ThroughputEstimator`), sampled
    /// when read on the node's `estimationClock`, with paused time excluded. It is `nil` for a node without
    /// bytes, before two reads have seen the bytes grow, and once the node is finished or cancelled. A stored value is
    /// returned as stored (a `Double` is rounded), even if negative; a stored value that is not a number
    /// (or not finite) reads `nil`, without falling back to the estimate. The descriptions skip values
    /// below 1.
    ///
    /// Thread safety: any thread. Complexity: O(1) when set; otherwise that of `fileSummary`.
    public var throughput: Int? {
        get {
            if let stored = userInfoValue(.throughputKey) { return Self.storedNumber(stored).flatMap(Self.roundedInt) }
            return currentEstimates(withBytes: true).bytesPerSecond.flatMap(Self.roundedInt)
        }
        set { setUserInfoObject(newValue, forKey: .throughputKey) }
    }

    /// The time left, in seconds: the value set (under `.estimatedTimeRemainingKey`), or else an estimate
    /// for any determinate node. **(Foundation, plus the estimate: Foundation leaves it to the creator.)**
    ///
    /// The estimate divides the work left, `totalUnitCount × (1 − fractionCompleted)` — which covers the
    /// whole subtree, weighted as `fractionCompleted` is — by the smoothed rate at which
    /// `totalUnitCount × fractionCompleted` grows (`ThroughputEstimator`), sampled when read on the node's
    /// `estimationClock`, with paused time excluded. It is 0 for a finished node, and `nil` for an
    /// indeterminate or cancelled node (one that will never finish) or before two reads have seen the work
    /// grow. A stored value is returned as stored
    /// (any integer or floating-point type, or a `Duration`); one that is not a number reads `nil`, without
    /// falling back to the estimate. The descriptions skip negative, non-finite and absurd (over 100 years)
    /// values.
    ///
    /// Thread safety: any thread. Complexity: O(1) when set; otherwise that of `fractionCompleted`.
    public var estimatedTimeRemaining: TimeInterval? {
        get {
            if let stored = userInfoValue(.estimatedTimeRemainingKey) { return Self.storedNumber(stored) }
            return currentEstimates(withBytes: false).secondsRemaining
        }
        set { setUserInfoObject(newValue, forKey: .estimatedTimeRemainingKey) }
    }

    /// A file operation kind stored in `userInfo`: a `FileOperationKind` or its raw `String`.
    static func operationKind(in value: (any Sendable)?) -> FileOperationKind? {
        switch value {
        case let kind as FileOperationKind: kind
        case let raw as String: FileOperationKind(rawValue: raw)
        default: nil
        }
    }

    /// A number stored in `userInfo`: any integer or floating-point value, as a `Double`; `nil` otherwise.
    static func storedNumber(_ value: (any Sendable)?) -> Double? {
        switch value {
        case let double as Double: double
        case let float as Float: Double(float)
        case let integer as any BinaryInteger: Double(integer)
        case let duration as Duration: duration.secondsValue
        default: nil
        }
    }

    /// The value stored for `key`.
    func userInfoValue(_ key: UserInfoKey) -> (any Sendable)? {
        state.withLock { $0.metadata.userInfo[key] }
    }

    /// The subtree's file counts when there are files *below* this node (a node's own file is not a
    /// subtree sum: a single file node reads `nil` for unset counts, as in Foundation).
    private func subtreeFileCounts() -> FileSummary? {
        let subtree = subtreeFiles()
        return subtree.hasFilesBelow ? subtree.summary : nil
    }
}
