import Dispatch
import ProgressTree
import ProgressTreePresentation
import Synchronization
import XCTest
import ProgressTreePlatform

/// `invalidate()` called from inside handlers, across observations and pacers: one delivery gate for both
/// (Docs/Observation.md and Docs/Presentation.md, "invalidate"). Run under ThreadSanitizer too.
final class HandlerInvalidationTests: XCTestCase {
    /// An observation handler invalidates a pacer while the pacer's handler invalidates that observation:
    /// both handlers are running (they meet on a `DispatchGroup` first), so each `invalidate()` finds the
    /// other's handler running. Both calls return (the second one without waiting, the first once the
    /// second's handler has returned), and neither handler is called again.
    func test_an_observation_handler_and_a_pacer_handler_that_invalidate_each_other_both_return() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 10)
        let meeting = Rendezvous(
            expectation(description: "observation side returned"), expectation(description: "pacer side returned"))
        let observationBox = ObservationBox()
        let pacerBox = Lock<LabelPacer?>(nil)
        let pacer = LabelPacer(queue: DispatchQueue(label: "pacer")) { _ in
            meeting.handlerCall(side: 1) { observationBox.observation.withLock { $0 }?.invalidate() }
        }
        pacerBox.withLock { $0 = pacer }
        let observation = node.observe(\.completedUnitCount, on: DispatchQueue(label: "observer"), options: .initial) {
            _, _ in
            meeting.handlerCall(side: 0) { pacerBox.withLock { $0 }?.invalidate() }
        }
        observationBox.observation.withLock { $0 = observation }
        pacer.send(progress: 0.5, label: "Importing")
        wait(for: meeting.returned, timeout: 30)

        // Both are invalidated: later changes and messages call no handler.
        node.completedUnitCount = 10
        pacer.send(progress: 1, label: "Done")
        observation.invalidate()  // waits for a delivery still on its way, if any
        pacer.invalidate()
        XCTAssertEqual(meeting.callCounts, [1, 1])
    }

    /// Two observation handlers that invalidate each other both return too (the same gate).
    func test_two_observation_handlers_that_invalidate_each_other_both_return() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 10)
        let meeting = Rendezvous(
            expectation(description: "first returned"), expectation(description: "second returned"))
        let boxes = [ObservationBox(), ObservationBox()]
        for side in 0..<2 {
            let other = boxes[1 - side]
            let observation = node.observe(
                \.completedUnitCount, on: DispatchQueue(label: "observer \(side)"), options: .initial
            ) { _, _ in
                meeting.handlerCall(side: side) { other.observation.withLock { $0 }?.invalidate() }
            }
            boxes[side].observation.withLock { $0 = observation }
        }
        wait(for: meeting.returned, timeout: 30)
        for box in boxes { box.observation.withLock { $0 }?.invalidate() }
        XCTAssertEqual(meeting.callCounts, [1, 1])
    }

    /// `invalidate()` of pacer B from inside pacer A's handler, while B's handler runs, returns only after B's
    /// handler has returned: being inside *a* handler does not excuse the wait, only being inside the
    /// invalidated pacer's own handler does.
    func test_invalidate_from_another_pacers_handler_waits_for_the_running_handler() {
        let bRunning = DispatchSemaphore(value: 0)
        let releaseB = DispatchSemaphore(value: 0)
        let bFinished = Atomic<Bool>(false)
        let b = LabelPacer(queue: DispatchQueue(label: "b")) { _ in
            bRunning.signal()
            releaseB.wait()
            bFinished.store(true, ordering: .relaxed)
        }
        let invalidateReturned = DispatchSemaphore(value: 0)
        let sawBFinished = Atomic<Bool>(false)
        let a = LabelPacer(queue: DispatchQueue(label: "a")) { _ in
            bRunning.wait()
            b.invalidate()
            sawBFinished.store(bFinished.load(ordering: .relaxed), ordering: .relaxed)
            invalidateReturned.signal()
        }
        b.send(progress: 0.5, label: "B")
        a.send(progress: 0.5, label: "A")
        // A correct `invalidate()` cannot return while B's handler is held; this wait only gives a wrong one
        // the time to show itself.
        let returnedEarly = invalidateReturned.wait(timeout: .now() + .milliseconds(200)) == .success
        XCTAssertFalse(returnedEarly)
        releaseB.signal()
        if !returnedEarly { invalidateReturned.wait() }
        XCTAssertTrue(sawBFinished.load(ordering: .relaxed))
        a.invalidate()
    }

    /// A task started from inside the handler inherits the handler's task-locals but runs on another
    /// thread: its `invalidate()` waits for the handler like any other thread's.
    func test_invalidate_from_a_task_started_in_the_handler_waits_for_the_handler() {
        let pacerBox = Lock<LabelPacer?>(nil)
        let taskCalledInvalidate = DispatchSemaphore(value: 0)
        let invalidateReturned = DispatchSemaphore(value: 0)
        let releaseHandler = DispatchSemaphore(value: 0)
        let flags = Flags()
        let pacer = LabelPacer(queue: DispatchQueue(label: "ui")) { _ in
            let pacer = pacerBox.withLock { $0 }
            Task {
                taskCalledInvalidate.signal()
                pacer?.invalidate()
                flags.sawHandlerFinished.store(flags.handlerFinished.load(ordering: .relaxed), ordering: .relaxed)
                invalidateReturned.signal()
            }
            releaseHandler.wait()
            flags.handlerFinished.store(true, ordering: .relaxed)
        }
        pacerBox.withLock { $0 = pacer }
        pacer.send(progress: 0.5, label: "A")
        taskCalledInvalidate.wait()
        let returnedEarly = invalidateReturned.wait(timeout: .now() + .milliseconds(200)) == .success
        XCTAssertFalse(returnedEarly)
        releaseHandler.signal()
        if !returnedEarly { invalidateReturned.wait() }
        XCTAssertTrue(flags.sawHandlerFinished.load(ordering: .relaxed))
        pacerBox.withLock { $0 = nil }
    }
}

private final class ObservationBox: Sendable {
    let observation = Lock<ProgressObservation?>(nil)
}

private final class Flags: Sendable {
    let handlerFinished = Atomic<Bool>(false)
    let sawHandlerFinished = Atomic<Bool>(false)
}

/// Two handlers that meet before acting: on its first call, each side waits until the other side's handler
/// is running too, then runs its action (invalidating the other side) and fulfils its expectation.
private final class Rendezvous: Sendable {
    let returned: [XCTestExpectation]
    private let bothRunning = DispatchGroup()
    private let calls = Lock<[Int]>([0, 0])

    init(_ first: XCTestExpectation, _ second: XCTestExpectation) {
        returned = [first, second]
        bothRunning.enter()
        bothRunning.enter()
    }

    var callCounts: [Int] { calls.withLock { $0 } }

    func handlerCall(side: Int, _ action: () -> Void) {
        let call = calls.withLock {
            $0[side] += 1; return $0[side]
        }
        guard call == 1 else { return }
        bothRunning.leave()
        bothRunning.wait()
        action()
        returned[side].fulfill()
    }
}
