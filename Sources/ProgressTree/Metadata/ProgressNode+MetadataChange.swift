// What a change of a node's metadata (its kind, `userInfo`, its description overrides) does after the
// node's lock is released: its observers and those of its ancestors hear of it, and, when the change can
// move the node's files, the summaries above it count the new files at the next read.
//
// A change that can move the node's files (its kind to or from `.file`, a file count) is an update of the
// node's summary: the node is marked changed (`markChanged()`), as a count change or a value set marks it, so
// the next refresh records it in its parent's summaries (Summaries/). Any other change moves no summary and
// no fraction: the node's own observers are signalled directly, and the parent is marked changed, which
// signals the parent's observers and the ancestors' as an update would (descriptions of the ancestors may
// read this node).

extension ProgressNode {
    /// Sets `describesFiles` and `summarized` when `metadata`, this node's, describes files. Under this
    /// node's lock, with the change of the metadata, so that whoever sees the bits clear afterwards also sees
    /// metadata without files, or hears of the change later (see `NodeFlags.describesFiles`).
    func noteDescribesFiles(_ metadata: Metadata) {
        let both = NodeFlags.describesFiles | NodeFlags.summarized
        if metadata.describesFiles && flags.load(ordering: .relaxed) & both != both {
            flags.bitwiseOr(both, ordering: .sequentiallyConsistent)
        }
    }

    /// Announces a change of this node's metadata, made under its lock and released; `parent` is the parent
    /// it had then (retained), `affectsFiles` whether the change can move this node's files (its kind to or
    /// from `.file`, a file count). Called outside every lock: signalling may run user code.
    func metadataChanged(affectsFiles: Bool, parent: ProgressNode?) {
        guard let parent else {
            // A root or a detached node: no parent to tell; its own mark signals its observers.
            markChanged()
            return
        }
        if flags.load(ordering: .sequentiallyConsistent) & NodeFlags.observed != 0 {
            var signals: [any ChangeSignalReceiver]?
            collectObservers(into: &signals)
            signals?.signal()
        }
        // A change of its files marks the node itself, and so the path above it: the next refresh records it
        // in its parent's summaries. Any other change marks the parent alone.
        if affectsFiles {
            noteSummaryChanged()
            markChanged()
        } else {
            parent.markChanged()
        }
    }
}
