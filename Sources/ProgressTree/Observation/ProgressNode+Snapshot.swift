extension ProgressNode {
    /// The state of a node at one moment, as one `Sendable` value: for `for await` loops, user interfaces
    /// and logs.
    public struct Snapshot: Sendable, Equatable {
        public var totalUnitCount: Int64
        public var completedUnitCount: Int64
        /// `fractionCompleted`, including attached children's partial progress.
        public var fractionCompleted: Double
        public var isIndeterminate: Bool
        public var isFinished: Bool
        public var isCancelled: Bool
        public var isPaused: Bool

        /// Whether no later snapshot can differ in a way that matters: the node finished or was cancelled.
        public var isFinal: Bool { isFinished || isCancelled }
    }

    /// The node's current state, read at once (the fraction brings the subtree up to date first).
    ///
    /// - Complexity: that of `fractionCompleted`.
    public var snapshot: Snapshot {
        let fraction = fractionCompleted
        let completed = completedUnitCount
        let total = totalUnitCount
        let flags = currentControlFlags
        return Snapshot(
            totalUnitCount: total, completedUnitCount: completed, fractionCompleted: fraction,
            isIndeterminate: FractionMath.isIndeterminate(completed: completed, total: total),
            isFinished: FractionMath.isFinished(completed: completed, total: total),
            isCancelled: flags.contains(.cancelled), isPaused: flags.contains(.paused))
    }

    /// The node's snapshots as an asynchronous sequence, for `for await` loops.
    ///
    /// Each iteration starts its own observation: it yields the current snapshot first, then a snapshot
    /// each time the node or its subtree changed, coalesced (a consumer slower than the updates sees the
    /// newest snapshot, never a backlog). It ends after yielding a snapshot whose node is finished or
    /// cancelled, and stops observing when the consuming task is cancelled.
    ///
    /// ```swift
    /// for await snapshot in album.snapshots {
    ///     print("\(Int(snapshot.fractionCompleted * 100))%")
    /// }
    /// ```
    public var snapshots: Snapshots { Snapshots(node: self) }

    /// An `AsyncSequence` of a node's snapshots; see `ProgressNode.snapshots`.
    public struct Snapshots: AsyncSequence, Sendable {
        public typealias Element = Snapshot
        public typealias Failure = Never
        let node: ProgressNode

        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(node: node)
        }

        /// The iterator of `Snapshots`. Not `Sendable`: use it from one task.
        public struct AsyncIterator: AsyncIteratorProtocol {
            private var base: AsyncStream<Snapshot>.Iterator

            init(node: ProgressNode) {
                let (stream, continuation) = AsyncStream.makeStream(
                    of: Snapshot.self, bufferingPolicy: .bufferingNewest(1))
                let observation = node.observe(
                    \.snapshot, on: .global(), options: .initial
                ) { _, change in
                    continuation.yield(change.newValue)
                    if change.newValue.isFinal { continuation.finish() }
                }
                continuation.onTermination = { _ in observation.invalidate() }
                base = stream.makeAsyncIterator()
            }

            public mutating func next() async -> Snapshot? {
                await base.next()
            }

            public mutating func next(isolation actor: isolated (any Actor)?) async -> Snapshot? {
                await base.next(isolation: actor)
            }
        }
    }
}

@available(*, unavailable)
extension ProgressNode.Snapshots.AsyncIterator: Sendable {}
