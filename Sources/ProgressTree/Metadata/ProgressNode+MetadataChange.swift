// What a change of a node's metadata (its kind, `userInfo`, its description overrides) does after the
// node's lock is released: its observers and those of its ancestors hear of it, and, when the change can
// move the node's files, its parent's kept file summary counts the new files at once.
//
// Metadata is not progress: no fraction moves, so the node is not queued in its parent. Its own observers
// are signalled directly, and the parent is marked changed (`markChanged()`), which signals the parent's
// observers and the ancestors' as an update would. So a program that gives 100,000 children of one node a
// kind and a file URL leaves the next reader of that node one marked parent to refresh, not 100,000 queued
// children; and, through `keepFileContribution(of:)`, no member of its file summary to compute either
// (Summaries/FileSums.swift, the "Changes" invariant).

extension ProgressNode {
    /// Sets `describesFiles` when `metadata`, this node's, describes files. Under this node's lock, with the
    /// change of the metadata, so that whoever sees the bit clear afterwards also sees metadata without
    /// files, or hears of the change later (see `NodeFlags.describesFiles`).
    func noteDescribesFiles(_ metadata: Metadata) {
        guard metadata.describesFiles, flags.load(ordering: .relaxed) & NodeFlags.describesFiles == 0 else { return }
        flags.bitwiseOr(NodeFlags.describesFiles, ordering: .sequentiallyConsistent)
    }

    /// Announces a change of this node's metadata, made under its lock and released; `parent` is the parent
    /// it had then (retained), `affectsFiles` whether the change can move this node's files (its kind to or
    /// from `.file`, a file count). Called outside every lock: signalling may run user code.
    /// `changedProperty`: the one custom property the change set, if that is the change (its parent then
    /// recomputes that property's total only, besides the files).
    func metadataChanged(affectsFiles: Bool, parent: ProgressNode?, changedProperty: ObjectIdentifier? = nil) {
        guard let parent else {
            // A root or a detached node: no parent to tell; its own mark signals its observers.
            markChanged()
            return
        }
        if affectsFiles { parent.keepFileContribution(of: self, changedProperty: changedProperty) }
        if flags.load(ordering: .sequentiallyConsistent) & NodeFlags.observed != 0 {
            var signals: [any ChangeSignalReceiver]?
            collectObservers(into: &signals)
            signals?.signal()
        }
        parent.markChanged()
    }
}
