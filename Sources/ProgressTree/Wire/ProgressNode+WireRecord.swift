#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ProgressNode {
    /// This node's line of the wire format, read now (`snapshot`, the metadata set by the user and the
    /// share it stands for in its parent, or stood for until it finished or failed, 0 if it never had a
    /// parent), with the given ids. Read-only: nothing is added to the update path.
    ///
    /// Throughput and time remaining are those set by the user (a reader mirroring the node estimates its
    /// own from the counts); the terminal's json mode puts its estimates there instead. `properties` are the
    /// node's own values of its `WireProgressProperty` properties (`wireProperties()`).
    ///
    /// - Complexity: O(1) and a few lock acquisitions of this node, plus one read of `fractionCompleted`.
    package func wireRecord(id: Int, parentID: Int?) -> ProgressWireRecord {
        let snapshot = self.snapshot
        var record = ProgressWireRecord(
            id: id, parentID: parentID,
            pendingUnitCount: max(0, pendingInParent.load(ordering: .relaxed)),
            totalUnitCount: snapshot.totalUnitCount, completedUnitCount: snapshot.completedUnitCount,
            state: .init(snapshot))
        record.fractionCompleted = snapshot.fractionCompleted.isFinite ? min(1, max(0, snapshot.fractionCompleted)) : 0
        record.isIndeterminate = snapshot.isIndeterminate && !snapshot.isFinished
        record.failureReason = snapshot.failureDescription
        record.failedBelow = snapshot.descendantOutcomes.failedCount
        record.cancelledBelow = snapshot.descendantOutcomes.cancelledCount
        let (metadata, cancellable, pausable) = self.state.withLock {
            ($0.metadata, $0.control.isCancellable, $0.control.isPausable)
        }
        record.localizedDescription = metadata.localizedDescriptionOverride
        record.localizedAdditionalDescription = metadata.localizedAdditionalDescriptionOverride
        record.kind = metadata.kind?.rawValue
        record.label = displayLabel
        let info = metadata.userInfo
        record.fileOperationKind = Self.operationKind(in: info[.fileOperationKindKey])?.rawValue
        record.fileURL = (info[.fileURLKey] as? URL)?.absoluteString
        record.fileTotalCount = Self.fileCount(in: info[.fileTotalCountKey])
        record.fileCompletedCount = Self.fileCount(in: info[.fileCompletedCountKey])
        record.throughput = Self.storedNumber(info[.throughputKey]).flatMap(Self.roundedInt)
        record.estimatedTimeRemaining = Self.storedNumber(info[.estimatedTimeRemainingKey]).flatMap {
            $0.isFinite ? $0 : nil
        }
        record.isCancellable = cancellable
        record.isPausable = pausable
        (record.properties, record.skippedProperties) = wireProperties()
        return record
    }
}

extension ProgressWireRecord.State {
    /// A node's state as a snapshot shows it: a final outcome first (failed, cancelled, finished), then
    /// paused, else running. The wire format and the terminal's lines (`LineStatus`) read it the same way.
    package init(_ snapshot: ProgressNode.Snapshot) {
        self =
            snapshot.isFailed
            ? .failed
            : snapshot.isCancelled
                ? .cancelled
                : snapshot.isFinished
                    ? .finished
                    : snapshot.isPaused
                        ? .paused
                        : .running
    }
}
