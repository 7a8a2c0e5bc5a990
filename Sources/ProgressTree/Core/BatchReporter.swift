extension ProgressNode {
    /// Counts the units of one loop without an atomic operation per unit, and adds them to its node when a
    /// reader could tell: at each visible step, when the work finishes, when the loop asks whether it was
    /// cancelled or paused, and when the reporter goes away.
    ///
    /// `advance(by:)` on a node is one atomic read-modify-write, a few nanoseconds: fine for most work, but
    /// a loop that does nothing else (hashing bytes, parsing lines, counting rows) spends that time on the
    /// counter. A batch reporter's `advance(by:)` is a compare and a plain subtraction, well under a
    /// nanosecond, and the node sees the same units, in batches:
    ///
    /// ```swift
    /// let progress = ProgressNode(totalUnitCount: Int64(lines.count))
    /// try progress.withBatchReporter { reporter in
    ///     for (index, line) in lines.enumerated() {
    ///         if index % 1_000 == 0 { try reporter.checkCancellation() }  // publishes what waits, then asks
    ///         parse(line)
    ///         reporter.advance()                 // no atomic operation
    ///     }
    /// }                                          // the remainder is published here, returned or thrown
    /// ```
    ///
    /// or, where a closure does not fit (an `async` loop):
    ///
    /// ```swift
    /// var reporter = progress.makeBatchReporter()
    /// for try await chunk in chunks {
    ///     try await reporter.checkpoint()       // publishes what waits; waits while paused
    ///     reporter.advance(by: Int64(chunk.count))
    /// }
    /// reporter.flush()                          // or let it go: dropping it publishes the rest
    /// ```
    ///
    /// ## When it publishes
    /// A *step* is a thousandth of the node's `totalUnitCount` (at least one unit; every unit while the
    /// total is not positive, when there is no fraction to show). The reporter adds its units to the node
    /// with the node's own `advance(by:)`:
    /// - when the node's count would reach the next multiple of the step: readers (`completedUnitCount`,
    ///   `fractionCompleted`, observers, a renderer) lag behind the loop by less than one step, never by
    ///   more, and the node is never ahead of the loop;
    /// - when the units would finish the node: the node finishes in the very `advance(by:)` call that
    ///   reports its last unit, never earlier (no unit is published before the loop reports it) and never
    ///   later;
    /// - when the loop asks `isCancelled`, `isPaused`, `checkCancellation()` or `checkpoint()`: the units
    ///   reported since the last publication are published before the answer, so the node shows all the work
    ///   done when the loop learns it must stop or wait (ask once per chunk of work, not per unit, to keep
    ///   the speed: each ask with units waiting is one `advance(by:)` of the node);
    /// - when `advance(by:)` takes work back (negative units), with the units not yet published;
    /// - on `flush()`, and when the reporter goes away (the end of `withBatchReporter`, or the end of the
    ///   variable's life): no unit is ever lost or counted twice.
    ///
    /// The reporter reads the node's counts when it publishes, and plans its next publication from them.
    /// It is meant to be the node's only writer. When another writer changes the node's count or total
    /// meanwhile (another thread's `advance(by:)`, a new `totalUnitCount`), every unit still adds up
    /// exactly, but the reporter sees the change only at its next publication, at most one step later, and
    /// the node finishes then if it is due. After changing the total of its own node, a loop can call
    /// `flush()` to plan from the new total at once.
    ///
    /// ## Ownership
    /// A reporter is owned by one loop: it is not `Sendable` (it cannot be handed to another thread or task)
    /// and not copyable (two copies would each publish the same units). Several threads each with a reporter
    /// of their own may report to one node: the node adds their publications atomically.
    ///
    /// - Complexity: `advance(by:)` is a compare and a subtraction, with no atomic operation, lock or
    ///   allocation; one call in a step (about a thousand per total) also costs a node's `advance(by:)`.
    public struct BatchReporter: ~Copyable {
        /// The node the units are published to.
        @usableFromInline let node: ProgressNode
        /// The batch planned at the last publication: the units to the node's next step or to its finish,
        /// whichever comes first. At least 1.
        @usableFromInline var batch: Int64
        /// The units still to report before the batch is published: `batch` minus the units reported and
        /// not yet added to the node. Between calls, `0 < untilPublication <= batch`.
        @usableFromInline var untilPublication: Int64

        /// Units reported and not yet added to the node.
        @usableFromInline var unpublished: Int64 { batch - untilPublication }

        /// How many steps a total is divided into: a step is a thousandth of the total, finer than a
        /// terminal bar of any width or a percentage with one decimal can show.
        static let stepsPerTotal: Int64 = 1_000

        @usableFromInline
        init(_ node: ProgressNode) {
            self.node = node
            batch = Self.unitsToNextPublication(completed: node.completedUnitCount, total: node.totalUnitCount)
            untilPublication = batch
        }

        /// Publishes what is left (see "When it publishes").
        deinit {
            if unpublished != 0 { node.advance(by: unpublished) }
        }

        /// Reports `units` more units of work done (negative units take work back).
        ///
        /// A compare and a subtraction. The units reach the node when its count would reach the next step or
        /// finish the node (then in this call), or when the loop asks about cancellation or pausing,
        /// calls `flush()`, or lets the reporter go. Negative units are published at once, with those still
        /// unpublished. Sums saturate at `Int64.max` and `Int64.min`, as the node's `advance(by:)` does.
        ///
        /// - Complexity: O(1), no atomic operation unless this call publishes.
        @inlinable @inline(__always)
        public mutating func advance(by units: Int64 = 1) {
            // Unsigned, the one compare also sends negative units to the slow path.
            if _fastPath(UInt64(bitPattern: units) < UInt64(bitPattern: untilPublication)) {
                untilPublication &-= units
            } else {
                publish(adding: units)
            }
        }

        /// Adds the unpublished units and then `units` to the node, and plans the next publication.
        ///
        /// The out-of-line work is a static function that takes the reporter's fields as values and returns
        /// the next batch, so the reporter's address never reaches a call the optimizer cannot see into and
        /// a loop keeps `untilPublication` in a register. An out-of-line `mutating` function would take the
        /// address: the loop would then store and reload the count on every unit, a chain through memory
        /// whose cost varies with the processor's store-to-load forwarding (several nanoseconds a unit
        /// instead of a fraction of one; `Benchmarks/compare.sh`, scenario 1b).
        @inlinable @inline(__always)
        mutating func publish(adding units: Int64) {
            batch = Self.published(node, unpublished: unpublished, adding: units)
            untilPublication = batch
        }

        /// Adds `pending` and then `units` to `node`, and returns the units after which to publish next.
        @usableFromInline @inline(never)
        static func published(_ node: ProgressNode, unpublished pending: Int64, adding units: Int64) -> Int64 {
            // One atomic add for both, unless their sum overflows: then each saturates on its own, as two
            // calls of the node's `advance(by:)` would.
            let (sum, overflow) = pending.addingReportingOverflow(units)
            if overflow { _ = add(pending, to: node) }
            let completed = add(overflow ? units : sum, to: node)
            return unitsToNextPublication(completed: completed, total: node.totalUnitCount)
        }

        /// The node's `advance(by:)`, returning the new count: its own when `units` is 0.
        private static func add(_ units: Int64, to node: ProgressNode) -> Int64 {
            if units == 0 { return node.completedStorage.load(ordering: .sequentiallyConsistent) }
            let completed = node.addToCompleted(units)
            node.countsDidChange(completed: completed, total: node.totalStorage.load(ordering: .sequentiallyConsistent))
            return completed
        }

        /// The units after which to publish next, for a node at `completed` of `total`: to the next multiple
        /// of the step, or to the finish when that comes first. At least 1.
        static func unitsToNextPublication(completed: Int64, total: Int64) -> Int64 {
            guard total > 0 else { return 1 }  // no fraction to show: every unit is a visible change
            let step = max(1, total / stepsPerTotal)
            // Steps are multiples of `step` counted from 0, so readers see the same counts on every run.
            var units = completed >= 0 ? step - completed % step : step
            if completed < total {
                let (toFinish, overflow) = total.subtractingReportingOverflow(completed)
                if !overflow { units = min(units, toFinish) }
            }
            return units
        }

        /// Adds every unpublished unit to the node now, and plans the next publication from the node's
        /// current counts (after the loop changed the node's total, for example).
        @inlinable
        public mutating func flush() {
            publish(adding: 0)
        }

        /// Adds the units reported since the last publication to the node, if there are any: what asking
        /// about cancellation or pausing does first.
        @inlinable @inline(__always)
        mutating func publishBeforeAnswering() {
            if untilPublication != batch { publish(adding: 0) }
        }

        /// Whether the node was cancelled: the node's `isCancelled`, asked after publishing the units
        /// reported since the last publication, so that the node shows all the work done when the loop
        /// learns it must stop.
        ///
        /// - Complexity: O(1): one atomic load, and an `advance(by:)` of the node when units are waiting.
        ///   Asking once per unit publishes once per unit; ask once per chunk of work to keep the speed.
        public var isCancelled: Bool {
            mutating get {
                publishBeforeAnswering()
                return node.isCancelled
            }
        }

        /// Whether the node is paused: the node's `isPaused`, asked after publishing the units reported
        /// since the last publication.
        ///
        /// - Complexity: that of `isCancelled`.
        public var isPaused: Bool {
            mutating get {
                publishBeforeAnswering()
                return node.isPaused
            }
        }

        /// Throws `CancellationError` if the node is cancelled or failed, after publishing the units
        /// reported since the last publication: the node's `checkCancellation()` for a loop that reports
        /// through this reporter.
        ///
        /// - Complexity: that of `isCancelled`.
        public mutating func checkCancellation() throws(CancellationError) {
            publishBeforeAnswering()
            try node.checkCancellation()
        }

        /// The node's `checkpoint()` (returns at once while the node runs, waits while it is paused, throws
        /// `CancellationError` when it or the task is cancelled), after publishing the units reported since
        /// the last publication.
        ///
        /// - Complexity: that of `isCancelled` when not paused.
        public mutating func checkpoint() async throws(CancellationError) {
            publishBeforeAnswering()
            try await node.checkpoint()
        }
    }

    /// A reporter for a loop that reports many small steps of this node's work: its `advance(by:)` is a
    /// plain add, and it publishes to this node at visible steps, at the finish, when the loop checks for
    /// cancellation or pausing, and when it goes away. See `BatchReporter`.
    public func makeBatchReporter() -> BatchReporter {
        BatchReporter(self)
    }

    /// Calls `body` with a reporter for this node (see `BatchReporter`), and publishes what is left of its
    /// units when `body` returns or throws.
    ///
    /// ```swift
    /// let progress = ProgressNode(totalUnitCount: Int64(rows.count))
    /// progress.withBatchReporter { reporter in
    ///     for row in rows {
    ///         checksum &+= row.hashValue
    ///         reporter.advance()
    ///     }
    /// }
    /// // progress.isFinished == true
    /// ```
    @inlinable
    public func withBatchReporter<Result, Failure: Error>(
        _ body: (inout BatchReporter) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        var reporter = BatchReporter(self)
        return try body(&reporter)
    }
}

/// Owned by one loop: a reporter handed to another thread could publish while its owner still counts.
@available(*, unavailable)
extension ProgressNode.BatchReporter: Sendable {}
