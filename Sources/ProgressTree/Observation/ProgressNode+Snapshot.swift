extension ProgressNode {
    /// The state of a node at one moment, as one `Sendable` value: for `for await` loops, user interfaces
    /// and logs.
    public struct Snapshot: Sendable, Equatable {
        /// `totalUnitCount` at the moment of the snapshot.
        public var totalUnitCount: Int64
        /// `completedUnitCount` at the moment of the snapshot.
        public var completedUnitCount: Int64
        /// `fractionCompleted`, including attached children's partial progress.
        public var fractionCompleted: Double
        /// `isIndeterminate`, from the same counts.
        public var isIndeterminate: Bool
        /// `isFinished`, from the same counts (never `true` for a failed node).
        public var isFinished: Bool
        /// `isCancelled`.
        public var isCancelled: Bool
        /// `isPaused`.
        public var isPaused: Bool
        /// `isFailed`.
        public var isFailed: Bool = false
        /// What a person reads for the node's `failure`: the error's `errorDescription` (for a
        /// `LocalizedError`) or its `description`; `nil` unless the node failed.
        public var failureDescription: String? = nil
        /// `descendantOutcomes`: how many nodes below failed or were cancelled.
        public var descendantOutcomes = DescendantOutcomes()

        /// Whether no later snapshot can differ in a way that matters: the node finished, was cancelled or
        /// failed.
        public var isFinal: Bool { isFinished || isCancelled || isFailed }
    }

    /// The node's current state, read at once (the fraction brings the subtree up to date first).
    ///
    /// - Complexity: that of `fractionCompleted`.
    public var snapshot: Snapshot {
        let fraction = fractionCompleted
        let completed = completedUnitCount
        let total = totalUnitCount
        let flags = currentControlFlags
        let (failureDescription, outcomes) = state.withLock {
            ($0.control.outcomes.failureDescription, $0.control.outcomes.descendants)
        }
        let isFailed = flags.contains(.failed)
        let isIndeterminate = FractionMath.isIndeterminate(completed: completed, total: total)
        let isFinished = !isFailed && FractionMath.isFinished(completed: completed, total: total)
        // A snapshot agrees with itself: the counts are read after the fraction, and an update landing in
        // between must not pair finished counts with the fraction from before the last unit ("finished at
        // 99.95%", which, being final, would end `snapshots`). Where the counts alone decide the fraction
        // (finished: 1, indeterminate: 0), that value is used.
        let consistentFraction = isFinished ? 1 : isIndeterminate ? 0 : fraction
        return Snapshot(
            totalUnitCount: total, completedUnitCount: completed, fractionCompleted: consistentFraction,
            isIndeterminate: isIndeterminate, isFinished: isFinished,
            isCancelled: flags.contains(.cancelled), isPaused: flags.contains(.paused), isFailed: isFailed,
            failureDescription: isFailed ? failureDescription : nil, descendantOutcomes: outcomes)
    }

    /// The node's snapshots as an asynchronous sequence, for `for await` loops.
    ///
    /// Each iteration starts its own observation: it yields the current snapshot first, then a snapshot
    /// each time the node or its subtree changed, coalesced (a consumer slower than the updates sees the
    /// newest snapshot, never a backlog). It ends after yielding a snapshot whose node is finished,
    /// cancelled or failed (`Snapshot.isFinal`), and stops observing when the consuming task is cancelled.
    /// Once `next()` has returned `nil`, for whichever reason, the iteration no longer observes the node.
    ///
    /// ```swift
    /// for await snapshot in album.snapshots {
    ///     print("\(Int(snapshot.fractionCompleted * 100))%")
    /// }
    /// ```
    public var snapshots: Snapshots { Snapshots(node: self) }

    /// An `AsyncSequence` of a node's snapshots; see `ProgressNode.snapshots`.
    public struct Snapshots: AsyncSequence, Sendable {
        /// Snapshots.
        public typealias Element = Snapshot
        /// Iterating never throws.
        public typealias Failure = Never
        let node: ProgressNode
        /// Called where the iteration's stream ends, just before that ends the observation: tests use it to
        /// hold the delivery that ended the stream there.
        var beforeTerminationEndsObservation: (@Sendable () -> Void)? = nil

        /// Starts a new observation for one `for await` loop.
        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(node: node, beforeTerminationEndsObservation: beforeTerminationEndsObservation)
        }

        /// The iterator of `Snapshots`. Not `Sendable`: use it from one task.
        public struct AsyncIterator: AsyncIteratorProtocol {
            private var base: AsyncStream<Snapshot>.Iterator
            /// Keeps the node alive while it is iterated: the observation holds it weakly, so when the
            /// sequence was the node's last owner (`for await s in makeNode().snapshots`) the node would go
            /// away at once, and the loop would wait forever without even the first snapshot.
            private let node: ProgressNode
            /// This iteration's observation. The stream's end invalidates it from the thread that ended the
            /// stream, which may still be on its way there when the consumer already reads the end, so
            /// `next()` also takes it off the node before returning `nil`.
            private let observation: ProgressObservation

            init(node: ProgressNode, beforeTerminationEndsObservation: (@Sendable () -> Void)?) {
                self.node = node
                let (stream, continuation) = AsyncStream.makeStream(
                    of: Snapshot.self, bufferingPolicy: .bufferingNewest(1))
                let observation = node.observe(
                    \.snapshot, on: .global(), options: .initial
                ) { _, change in
                    continuation.yield(change.newValue)
                    if change.newValue.isFinal { continuation.finish() }
                }
                continuation.onTermination = { _ in
                    beforeTerminationEndsObservation?()
                    observation.invalidate()
                }
                self.observation = observation
                base = stream.makeAsyncIterator()
            }

            /// The next snapshot; `nil` after the final one or when the task is cancelled. Once it has
            /// returned `nil`, the node has no observer of this iteration.
            public mutating func next() async -> Snapshot? {
                ended(await base.next())
            }

            /// The next snapshot, keeping the caller's isolation; see `next()`.
            public mutating func next(isolation actor: isolated (any Actor)?) async -> Snapshot? {
                ended(await base.next(isolation: actor))
            }

            /// `snapshot`, after taking the observation off the node when it is `nil`. Without waiting for a
            /// delivery still running: the iteration's handler is the library's own and calls no user code.
            private func ended(_ snapshot: Snapshot?) -> Snapshot? {
                if snapshot == nil { observation.stopSignalling() }
                return snapshot
            }
        }
    }
}

@available(*, unavailable)
extension ProgressNode.Snapshots.AsyncIterator: Sendable {}
