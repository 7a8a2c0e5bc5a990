import Dispatch
import Foundation
@testable import ProgressTree
import Synchronization
import TestSupport
import XCTest
import ProgressTreePlatform

/// Fresh children (`ProgressNode(totalUnitCount:parent:pendingUnitCount:)`) join their parent through a
/// lock-free stack that anything listing children settles into the parent's table, oldest first, and a
/// finishing fresh child on top pops itself off it (ProgressNode+FreshChildren.swift). A finishing child
/// whose progress the parent never showed is credited with one atomic add (ProgressNode+Finishing.swift).
/// These tests pin what users see of that: the order of `children`, exact credits, release of finished
/// children, parents going away while a child finishes, control transitions reaching unsettled children,
/// and the path refresh racing with finishes. The concurrent ones run a fixed number of rounds on `Thread`s
/// that start together at a spin barrier (no sleeps); they run under ThreadSanitizer in `.ci/run`.
final class FreshChildrenTests: XCTestCase {
    // MARK: Order of `children`

    func test_children_lists_fresh_added_and_implicit_children_in_the_order_they_were_added() {
        let root = ProgressNode(totalUnitCount: 100)
        let fresh1 = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        let added1 = ProgressNode.discreteProgress(totalUnitCount: 2)
        root.addChild(added1, withPendingUnitCount: 1)
        root.becomeCurrent(withPendingUnitCount: 3)
        let implicitThread = ProgressNode(totalUnitCount: 3)
        root.resignCurrent()
        let fresh2 = ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 1)
        let implicitTask = root.withCurrent(pendingUnitCount: 5) { ProgressNode(totalUnitCount: 5) }
        let added2 = ProgressNode.discreteProgress(totalUnitCount: 6)
        root.addChild(added2, withPendingUnitCount: 1)
        let implicitPerform = root.performAsCurrent(withPendingUnitCount: 7) { ProgressNode(totalUnitCount: 7) }
        let fresh3 = ProgressNode(totalUnitCount: 8, parent: root, pendingUnitCount: 1)
        let expected = [fresh1, added1, implicitThread, fresh2, implicitTask, added2, implicitPerform, fresh3]
        XCTAssertEqual(ids(root.children), ids(expected))
        XCTAssertEqual(ids(root.children), ids(expected), "listing again (all settled) keeps the order")
        XCTAssertEqual(root.children.map(\.totalUnitCount), [1, 2, 3, 4, 5, 6, 7, 8])
    }

    /// Listing in between (which settles the stack into the table) and children finishing on top of the
    /// stack (popped), below a younger sibling (removed under the lock) and from the table do not disturb
    /// the order of the others.
    func test_children_keeps_the_order_of_addition_across_settles_and_finishes() {
        let root = ProgressNode(totalUnitCount: 100)
        let a = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        let b = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        XCTAssertEqual(ids(root.children), ids([a, b]))  // a and b settle into the table
        let c = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        let added = ProgressNode.discreteProgress(totalUnitCount: 1)
        root.addChild(added, withPendingUnitCount: 1)  // settles c before inserting itself
        let d = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        let e = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        let f = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        f.advance()  // on top of the stack: pops itself
        d.advance()  // below e: settles d and e, then leaves the table
        a.advance()  // in the table since the first listing
        XCTAssertEqual(ids(root.children), ids([b, c, added, e]))
        let g = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        let h = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        g.advance()  // below h
        XCTAssertEqual(ids(root.children), ids([b, c, added, e, h]))
        XCTAssertEqual(root.completedUnitCount, 4)
        XCTAssertEqual(root.fractionCompleted, 0.04)
    }

    /// The tree description settles too: it prints fresh and added children in the order they were added.
    func test_description_prints_unsettled_fresh_children_in_the_order_they_were_added() {
        let root = ProgressNode(totalUnitCount: 10)
        _ = ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 1)
        let added = ProgressNode.discreteProgress(totalUnitCount: 5)
        root.addChild(added, withPendingUnitCount: 2)
        let last = ProgressNode(totalUnitCount: 6, parent: root, pendingUnitCount: 3)
        last.advance(by: 3)
        XCTAssertEqual(
            root.description,
            """
            ProgressNode: 15.00% (0 of 10)
              portion 1: 0.00% (0 of 4)
              portion 2: 0.00% (0 of 5)
              portion 3: 50.00% (3 of 6)
            """)
    }

    // MARK: Credits and release

    /// A fresh child that finishes while on top of the stack (popped without the parent's lock), one that
    /// finishes below a younger sibling (through the lock), one whose share the parent showed (retired
    /// through the refresh domain) and one credited without a share after a read: each adds exactly its
    /// pending count, never twice, and is released by its parent at once.
    func test_each_way_of_finishing_credits_exactly_the_pending_count_and_releases_the_child() {
        let root = ProgressNode(totalUnitCount: 20)
        let a = WeakNode()
        let b = WeakNode()
        let c = WeakNode()
        let d = WeakNode()
        var long: ProgressNode? = ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 8)
        a.node = long
        do {
            let onTop = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 3)
            b.node = onTop
            onTop.completedUnitCount = 2
        }
        XCTAssertNil(b.node, "finished on top of the stack: popped and released")
        XCTAssertEqual(root.completedUnitCount, 3)
        XCTAssertEqual(root.fractionCompleted, 3.0 / 20)
        long!.advance()  // queued; the read records its share (2 of 8 units)
        XCTAssertEqual(root.fractionCompleted, 5.0 / 20)
        do {
            let below = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 4)
            c.node = below
            let younger = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 5)
            d.node = younger
            below.advance()  // not on top: through the parent's lock
            XCTAssertEqual(root.completedUnitCount, 7)
            XCTAssertEqual(root.fractionCompleted, 9.0 / 20)
            younger.advance()  // on top again: popped
        }
        XCTAssertNil(c.node)
        XCTAssertNil(d.node)
        XCTAssertEqual(root.completedUnitCount, 12)
        XCTAssertEqual(root.fractionCompleted, 14.0 / 20)
        long!.advance(by: 3)  // its share was shown: retired, the share leaves as the credit arrives
        XCTAssertEqual(root.completedUnitCount, 20)
        XCTAssertEqual(root.fractionCompleted, 1)
        XCTAssertTrue(root.isFinished)
        long = nil
        XCTAssertNil(a.node, "the parent let go of the retired child without a further read")
        XCTAssertTrue(root.children.isEmpty)
    }

    /// A child queued by an update but never read before it finishes (its share was never recorded, but it
    /// sits in the parent's queue), a fresh child with a pending count of 0, and a fresh child with file
    /// metadata (its files are folded into the parent under the lock, not popped): exact credits, released.
    func test_queued_zero_pending_and_file_children_are_credited_exactly_and_released() {
        let root = ProgressNode(totalUnitCount: 6)
        root.fileOperationKind = .copying
        let weak = (0..<3).map { _ in WeakNode() }
        do {
            let queued = ProgressNode(totalUnitCount: 3, parent: root, pendingUnitCount: 2)
            weak[0].node = queued
            queued.advance()  // queued in the parent, never read
            queued.advance(by: 2)
        }
        XCTAssertNil(weak[0].node, "drained at once: no refresh was running")
        XCTAssertEqual(root.completedUnitCount, 2)
        do {
            let zero = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 0)
            weak[1].node = zero
            zero.advance()
        }
        XCTAssertNil(weak[1].node)
        XCTAssertEqual(root.completedUnitCount, 2)
        do {
            let file = ProgressNode(totalUnitCount: 1_000, parent: root, pendingUnitCount: 4)
            file.kind = .file
            weak[2].node = file
            file.completedUnitCount = 1_000
        }
        XCTAssertNil(weak[2].node)
        XCTAssertEqual(root.completedUnitCount, 6)
        XCTAssertTrue(root.isFinished)
        XCTAssertEqual(
            root.fileSummary,
            ProgressNode.FileSummary(
                fileTotalCount: 1, fileCompletedCount: 1, totalByteCount: 1_000, completedByteCount: 1_000))
    }

    /// A parent let go by its creator while fresh children are still on its stack (never listed) releases
    /// them: they outlive it only while the test holds them, they are orphaned (no parent) and finishing
    /// them afterwards is harmless.
    func test_a_released_parent_releases_and_orphans_its_unsettled_fresh_children() {
        let parentRef = WeakNode()
        let childRefs = (0..<3).map { _ in WeakNode() }
        var held: ProgressNode?
        do {
            let parent = ProgressNode(totalUnitCount: 3)
            parentRef.node = parent
            for ref in childRefs {
                let child = ProgressNode(totalUnitCount: 2, parent: parent, pendingUnitCount: 1)
                ref.node = child  // held by the parent's stack only
            }
            held = childRefs[1].node
            XCTAssertNotNil(childRefs[0].node, "the stack holds its children")
        }
        XCTAssertNil(parentRef.node)
        XCTAssertNil(childRefs[0].node)
        XCTAssertNil(childRefs[2].node)
        XCTAssertNil(held!.parent)
        held!.advance(by: 2)
        XCTAssertTrue(held!.isFinished)
        XCTAssertEqual(held!.fractionCompleted, 1)
        held = nil
        XCTAssertNil(childRefs[1].node)
    }

    // MARK: Control transitions reaching unsettled children

    /// `cancel()`, `pause()`, `resume()` and `fail(_:)` of a parent reach fresh children still on its stack,
    /// with their handlers run once, and the failure counts them as cancelled.
    func test_control_transitions_reach_fresh_children_never_listed() {
        let log = ControlCallLog()
        let paused = ProgressNode(totalUnitCount: 2)
        let pausedChildren = (0..<2).map { _ in ProgressNode(totalUnitCount: 1, parent: paused, pendingUnitCount: 1) }
        for (index, child) in pausedChildren.enumerated() {
            child.pausingHandler = log.handler("paused \(index)")
            child.resumingHandler = log.handler("resumed \(index)")
        }
        paused.pause()
        XCTAssertEqual(pausedChildren.map(\.isPaused), [true, true])
        let late = ProgressNode(totalUnitCount: 1, parent: paused, pendingUnitCount: 1)
        XCTAssertTrue(late.isPaused)
        paused.resume()
        XCTAssertEqual((pausedChildren + [late]).map(\.isPaused), [false, false, false])
        XCTAssertEqual(log.all, ["paused 0", "paused 1", "resumed 0", "resumed 1"])

        let cancelled = ProgressNode(totalUnitCount: 2)
        let cancelledChild = ProgressNode(totalUnitCount: 1, parent: cancelled, pendingUnitCount: 1)
        let grandchild = ProgressNode(totalUnitCount: 1, parent: cancelledChild, pendingUnitCount: 1)
        cancelledChild.cancellationHandler = log.handler("cancelled child")
        grandchild.cancellationHandler = log.handler("cancelled grandchild")
        cancelled.cancel()
        XCTAssertTrue(cancelledChild.isCancelled)
        XCTAssertTrue(grandchild.isCancelled)
        XCTAssertEqual(log.count("cancelled child"), 1)
        XCTAssertEqual(log.count("cancelled grandchild"), 1)

        let failed = ProgressNode(totalUnitCount: 3)
        let failedChildren = (0..<3).map { _ in ProgressNode(totalUnitCount: 1, parent: failed, pendingUnitCount: 1) }
        failed.fail(TestFailure())
        XCTAssertEqual(failedChildren.map(\.isCancelled), [true, true, true])
        XCTAssertEqual(failedChildren.map(\.isFailed), [false, false, false])
        XCTAssertEqual(
            failed.descendantOutcomes, ProgressNode.DescendantOutcomes(cancelledCount: 3, cancelledByFailureCount: 3))
    }

    // MARK: Concurrency

    /// Four threads create fresh children of one parent (every fifth through `addChild`), finishing every
    /// third at once (mostly popped from the top), while a fifth thread lists the children. Every listing,
    /// and the final one, shows each thread's unfinished children in the order that thread added them; the
    /// final one shows exactly those; every credit counts once.
    func test_concurrently_added_children_are_listed_in_each_threads_order_of_addition() {
        let threads = 4
        let perThread = 60
        for _ in 0..<10 {
            let root = ProgressNode(totalUnitCount: Int64(threads * perThread))
            let barrier = SpinBarrier(parties: threads + 1)
            let done = Counter()
            let badListing = ControlBox<[Int64]?>(nil)
            var bodies: [@Sendable () -> Void] = (0..<threads).map { thread in
                {
                    barrier.arriveAndWait()
                    for index in 0..<perThread {
                        // The total names the child: thread × 1000 + index + 1.
                        let total = Int64(thread * 1_000 + index + 1)
                        let child: ProgressNode
                        if index % 5 == 4 {
                            child = ProgressNode.discreteProgress(totalUnitCount: total)
                            root.addChild(child, withPendingUnitCount: 1)
                        } else {
                            child = ProgressNode(totalUnitCount: total, parent: root, pendingUnitCount: 1)
                        }
                        if index % 3 == 0 { child.completedUnitCount = total }
                    }
                    done.add(1)
                }
            }
            bodies.append {
                barrier.arriveAndWait()
                while done.count < threads {
                    let totals = root.children.map(\.totalUnitCount)
                    if !isOrderedPerThread(totals) { badListing.value = totals }
                }
            }
            runOnThreads(bodies)
            XCTAssertNil(badListing.value, "a listing broke a thread's order of addition")
            let expected = (0..<threads).flatMap { thread in
                (0..<perThread).filter { $0 % 3 != 0 }.map { Int64(thread * 1_000 + $0 + 1) }
            }
            let listed = root.children.map(\.totalUnitCount)
            XCTAssertTrue(isOrderedPerThread(listed))
            XCTAssertEqual(listed.sorted(), expected.sorted())
            XCTAssertEqual(root.completedUnitCount, Int64(threads * (perThread / 3)))
        }
    }

    /// Writers create fresh children of one parent and take them to half and to finished, reading the root
    /// after the first step now and then (so some shares are shown and retired, some credited without a
    /// share), while a reader polls the root: the root's fraction never goes back (a child counted twice
    /// would overshoot and drop) and ends exact; every finished child was released.
    func test_children_finishing_with_and_without_a_share_are_never_counted_twice() {
        let writers = 2
        let perWriter = 300
        let total = Int64(writers * perWriter + 1)  // one unit never done: the end is exact, not clamped
        let root = ProgressNode(totalUnitCount: total)
        let wentBack = Flag()
        let done = Counter()
        let finished = Lock<[WeakNode]>([])
        let barrier = SpinBarrier(parties: writers + 1)
        var bodies: [@Sendable () -> Void] = (0..<writers).map { writer in
            {
                barrier.arriveAndWait()
                var weak: [WeakNode] = []
                for index in 0..<perWriter {
                    let ref = WeakNode()
                    do {
                        let child = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 1)
                        ref.node = child
                        child.advance()
                        if (index + writer) % 3 == 0 { _ = root.fractionCompleted }
                        child.advance()
                    }
                    weak.append(ref)
                }
                finished.withLock { $0.append(contentsOf: weak) }
                done.add(1)
            }
        }
        bodies.append {
            barrier.arriveAndWait()
            var last = 0.0
            while done.count < writers {
                let fraction = root.fractionCompleted
                if fraction < last { wentBack.set() }
                last = fraction
            }
        }
        runOnThreads(bodies)
        XCTAssertFalse(wentBack.isSet, "the root's fraction went back")
        XCTAssertEqual(root.completedUnitCount, total - 1)
        XCTAssertEqual(root.fractionCompleted, Double(total - 1) / Double(total))
        // A child that finished while a read ran waits in the root's queue for the next read, which has
        // now run: every child is released.
        XCTAssertEqual(finished.withLock { $0.filter { $0.node == nil }.count }, writers * perWriter)
        XCTAssertTrue(root.children.isEmpty)
    }

    /// The last reference to a parent is dropped on one thread while its child finishes on another, in the
    /// ways a child can finish: popped from the top, below a younger sibling, retired after its share was
    /// shown, and with a credit that finishes the parent. Nothing crashes, the child ends finished, and
    /// parent and siblings are freed.
    func test_a_parent_released_while_its_child_finishes_on_another_thread_leaves_the_child_finished() {
        enum Way: CaseIterable { case onTop, belowSibling, retired, finishesParent, settled }
        for way in Way.allCases {
            for _ in 0..<60 {
                let parentRef = WeakNode()
                let siblingRef = WeakNode()
                let child: ProgressNode
                let parentHandle: Unmanaged<ProgressNode>
                do {
                    let parent = ProgressNode(totalUnitCount: way == .finishesParent ? 2 : 10)
                    parentRef.node = parent
                    child = ProgressNode(totalUnitCount: 2, parent: parent, pendingUnitCount: 2)
                    switch way {
                    case .onTop, .finishesParent: break
                    case .belowSibling:
                        let sibling = ProgressNode(totalUnitCount: 1, parent: parent, pendingUnitCount: 1)
                        siblingRef.node = sibling
                    case .retired:
                        child.advance()
                        XCTAssertEqual(parent.fractionCompleted, 0.1)
                    case .settled:
                        let sibling = ProgressNode(totalUnitCount: 1, parent: parent, pendingUnitCount: 1)
                        siblingRef.node = sibling
                        XCTAssertEqual(parent.children.count, 2)
                    }
                    parentHandle = Unmanaged.passRetained(parent)
                }
                let barrier = SpinBarrier(parties: 2)
                runOnThreads([
                    {
                        barrier.arriveAndWait()
                        parentHandle.release()
                    },
                    {
                        barrier.arriveAndWait()
                        child.completedUnitCount = 2
                    },
                ])
                XCTAssertTrue(child.isFinished, "\(way)")
                XCTAssertEqual(child.fractionCompleted, 1, "\(way)")
                XCTAssertNil(child.parent, "\(way)")
                XCTAssertNil(parentRef.node, "\(way): parent freed")
                XCTAssertNil(siblingRef.node, "\(way): sibling freed with its parent")
            }
        }
    }

    /// One thread creates fresh children of a parent while another cancels it: a child created after
    /// `cancel()` returned is cancelled as it is created, and in the end every child is cancelled (once:
    /// its handler ran once, and the parent counts each once).
    func test_cancel_reaches_fresh_children_created_concurrently() {
        let perRound = 40
        for _ in 0..<100 {
            let root = ProgressNode(totalUnitCount: Int64(perRound))
            let children = ControlBox<[ProgressNode]>([])
            let lateButRunning = Counter()
            let handlerRuns = Counter()
            let started = Flag()
            let cancelReturned = Flag()
            runOnThreads([
                {
                    var mine: [ProgressNode] = []
                    for index in 0..<perRound {
                        let after = cancelReturned.isSet
                        let child = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
                        if after && !child.isCancelled { lateButRunning.add(1) }
                        child.cancellationHandler = { handlerRuns.add(1) }
                        mine.append(child)
                        if index == perRound / 4 { started.set() }
                    }
                    children.value = mine
                },
                {
                    while !started.isSet {}
                    root.cancel()
                    cancelReturned.set()
                },
            ])
            XCTAssertEqual(lateButRunning.count, 0, "a child created after cancel() returned")
            XCTAssertEqual(children.value.filter(\.isCancelled).count, perRound)
            XCTAssertEqual(handlerRuns.count, perRound)
            XCTAssertEqual(root.descendantOutcomes.cancelledCount, perRound)
            XCTAssertEqual(ids(root.children), ids(children.value))
        }
    }

    /// One thread creates fresh children (finishing some) while another pauses and resumes their parent
    /// over and over, ending with `resume()`: then no child is paused, and a final `pause()` and `resume()`
    /// reach every unfinished child.
    func test_pause_and_resume_reach_fresh_children_created_concurrently() {
        let perRound = 30
        for _ in 0..<100 {
            let root = ProgressNode(totalUnitCount: Int64(perRound))
            let children = ControlBox<[ProgressNode]>([])
            let barrier = SpinBarrier(parties: 2)
            runOnThreads([
                {
                    barrier.arriveAndWait()
                    var mine: [ProgressNode] = []
                    for index in 0..<perRound {
                        let child = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
                        if index % 4 == 3 { child.advance() } else { mine.append(child) }
                    }
                    children.value = mine
                },
                {
                    barrier.arriveAndWait()
                    for _ in 0..<10 {
                        root.pause()
                        root.resume()
                    }
                },
            ])
            let unfinished = children.value
            XCTAssertFalse(root.isPaused)
            XCTAssertEqual(unfinished.filter(\.isPaused).count, 0, "a child left paused after the parent resumed")
            root.resume()
            XCTAssertEqual(unfinished.filter(\.isPaused).count, 0, "a child left paused after a final resume()")
            root.pause()
            XCTAssertEqual(unfinished.filter(\.isPaused).count, unfinished.count)
            root.resume()
            XCTAssertEqual(unfinished.filter(\.isPaused).count, 0)
            XCTAssertEqual(ids(root.children), ids(unfinished))
        }
    }

    /// One thread creates fresh children while another fails their parent: every child ends cancelled, not
    /// failed, a child created after `fail(_:)` returned is cancelled as it is created, and the parent counts
    /// each once.
    func test_fail_reaches_fresh_children_created_concurrently() {
        let perRound = 40
        for _ in 0..<100 {
            let grandparent = ProgressNode(totalUnitCount: 10)
            let root = ProgressNode(totalUnitCount: Int64(perRound), parent: grandparent, pendingUnitCount: 10)
            let children = ControlBox<[ProgressNode]>([])
            let lateButRunning = Counter()
            let started = Flag()
            let failReturned = Flag()
            runOnThreads([
                {
                    var mine: [ProgressNode] = []
                    for index in 0..<perRound {
                        let after = failReturned.isSet
                        let child = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
                        if after && !child.isCancelled { lateButRunning.add(1) }
                        mine.append(child)
                        if index == perRound / 4 { started.set() }
                    }
                    children.value = mine
                },
                {
                    while !started.isSet {}
                    root.fail(TestFailure())
                    failReturned.set()
                },
            ])
            XCTAssertEqual(lateButRunning.count, 0, "a child created after fail(_:) returned")
            XCTAssertTrue(root.isFailed)
            XCTAssertEqual(children.value.filter(\.isCancelled).count, perRound)
            XCTAssertEqual(children.value.filter(\.isFailed).count, 0)
            XCTAssertEqual(
                root.descendantOutcomes,
                ProgressNode.DescendantOutcomes(cancelledCount: perRound, cancelledByFailureCount: perRound))
            XCTAssertEqual(grandparent.descendantOutcomes.failedCount, 1)
            XCTAssertEqual(grandparent.completedUnitCount, 0)
            XCTAssertEqual(grandparent.fractionCompleted, 0)
        }
    }

    // MARK: The path refresh

    /// One thread updates a long-lived child and reads the root after each update (so its updates refresh
    /// their path themselves), a sibling of which is created and finished after each step, sometimes after
    /// a read that shows its share: every read is exact.
    func test_path_refresh_after_each_update_is_exact_while_siblings_finish() {
        let root = ProgressNode(totalUnitCount: 200)
        let middle = ProgressNode(totalUnitCount: 150, parent: root, pendingUnitCount: 200)
        let long = ProgressNode(totalUnitCount: 100, parent: middle, pendingUnitCount: 100)
        var finished = 0.0
        for step in 1...50 {
            long.advance()
            XCTAssertEqual(root.fractionCompleted, (finished + Double(step)) / 150, accuracy: 1e-12, "step \(step)")
            let sibling = ProgressNode(totalUnitCount: 2, parent: middle, pendingUnitCount: 1)
            sibling.advance()
            if step % 2 == 0 {
                // Its share shown by the read, then retired.
                XCTAssertEqual(
                    root.fractionCompleted, (finished + Double(step) + 0.5) / 150, accuracy: 1e-12, "step \(step)")
            }
            sibling.advance()
            finished += 1
            XCTAssertEqual(middle.completedUnitCount, Int64(finished))
            XCTAssertEqual(root.fractionCompleted, (finished + Double(step)) / 150, accuracy: 1e-12, "step \(step)")
        }
        long.advance(by: 50)
        XCTAssertEqual(middle.completedUnitCount, 150)
        XCTAssertTrue(root.isFinished)
        XCTAssertEqual(root.completedUnitCount, 200)
        XCTAssertEqual(root.fractionCompleted, 1)
    }

    /// The same racing: one thread advances a long-lived grandchild of the root and reads the root after
    /// each update, while two threads create fresh siblings under the same middle node and finish them
    /// (reading the root in between, now and then). The counts and fractions end exact.
    func test_path_refresh_racing_with_children_finishing_ends_at_exact_values() {
        let steps = 600
        let finishers = 2
        let perFinisher = 150
        for _ in 0..<3 {
            let finishedUnits = finishers * perFinisher
            let root = ProgressNode(totalUnitCount: 10)
            let middle = ProgressNode(
                totalUnitCount: Int64(steps + finishedUnits), parent: root, pendingUnitCount: 10)
            let long = ProgressNode(totalUnitCount: Int64(steps + 1), parent: middle, pendingUnitCount: Int64(steps))
            let barrier = SpinBarrier(parties: finishers + 1)
            var bodies: [@Sendable () -> Void] = [
                {
                    barrier.arriveAndWait()
                    for _ in 0..<steps {
                        long.advance()
                        _ = root.fractionCompleted
                    }
                }
            ]
            for finisher in 0..<finishers {
                bodies.append {
                    barrier.arriveAndWait()
                    for index in 0..<perFinisher {
                        let child = ProgressNode(totalUnitCount: 2, parent: middle, pendingUnitCount: 1)
                        child.advance()
                        if (index + finisher) % 2 == 0 { _ = root.fractionCompleted }
                        child.advance()
                    }
                }
            }
            runOnThreads(bodies)
            let middleFraction =
                (Double(finishedUnits) + Double(steps) * Double(steps) / Double(steps + 1))
                / Double(steps + finishedUnits)
            XCTAssertEqual(middle.completedUnitCount, Int64(finishedUnits))
            XCTAssertEqual(long.completedUnitCount, Int64(steps))
            XCTAssertEqual(middle.fractionCompleted, middleFraction, accuracy: 1e-12)
            XCTAssertEqual(root.fractionCompleted, middleFraction, accuracy: 1e-12)
            XCTAssertEqual(ids(middle.children), ids([long]))
            long.advance()
            XCTAssertTrue(root.isFinished)
            XCTAssertEqual(root.completedUnitCount, 10)
            XCTAssertEqual(root.fractionCompleted, 1)
        }
    }
}

// MARK: - Helpers

private func ids(_ nodes: [ProgressNode]) -> [ObjectIdentifier] { nodes.map(ObjectIdentifier.init) }

/// Whether the totals (thread × 1000 + index + 1) of each thread appear in increasing order.
private func isOrderedPerThread(_ totals: [Int64]) -> Bool {
    var last: [Int64: Int64] = [:]
    for total in totals {
        let thread = total / 1_000
        if let previous = last[thread], previous >= total { return false }
        last[thread] = total
    }
    return true
}

/// A weak reference, to check that a node was freed.
private final class WeakNode: @unchecked Sendable {
    weak var node: ProgressNode?
}

private struct TestFailure: Error, CustomStringConvertible {
    var description: String { "test failure" }
}

/// Lets `parties` threads start a step together (spinning: each party runs on its own `Thread`).
private final class SpinBarrier: Sendable {
    private let arrived = Atomic<Int>(0)
    private let parties: Int
    init(parties: Int) { self.parties = parties }
    func arriveAndWait() {
        arrived.add(1, ordering: .sequentiallyConsistent)
        while arrived.load(ordering: .sequentiallyConsistent) < parties {}
    }
}

/// Runs each body on a thread of its own and returns when all have returned.
private func runOnThreads(_ bodies: [@Sendable () -> Void]) {
    let finished = DispatchSemaphore(value: 0)
    for body in bodies {
        Thread {
            body()
            finished.signal()
        }.start()
    }
    for _ in bodies { finished.wait() }
}
