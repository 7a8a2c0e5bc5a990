import Dispatch
import Observation
@testable import ProgressTree
import XCTest

/// `ObservableProgress.summary(of:)`: a custom property's summary followed by Swift's Observation
/// (Docs/Observation.md), coalesced and announced as `fractionCompleted` is. `PhotosSkipped` and
/// `UploadRate` are declared in CustomPropertyTests.swift.
final class ObservableSummaryTests: XCTestCase {
    /// Tracks `read` once; the semaphore is signalled when a change of what it read is announced.
    private func track<Value>(_ read: () -> Value) -> (value: Value, changed: DispatchSemaphore) {
        let changed = DispatchSemaphore(value: 0)
        let value = withObservationTracking(read) { changed.signal() }
        return (value, changed)
    }

    func test_the_first_read_is_the_nodes_summary() {
        let album = ProgressNode(totalUnitCount: 2)
        let photo = ProgressNode(totalUnitCount: 1, parent: album, pendingUnitCount: 1)
        photo[PhotosSkipped.self] = 2
        XCTAssertEqual(album.observable.summary(of: PhotosSkipped.self), 2)
    }

    /// A skipped photo finishes: the album's delivery reads the new summary, stores it, then announces it.
    func test_tracking_a_summary_hears_of_its_change_and_reads_the_new_summary() {
        let album = ProgressNode(totalUnitCount: 2)
        let photo = ProgressNode(totalUnitCount: 1, parent: album, pendingUnitCount: 1)
        let progress = album.observable
        let tracked = track { progress.summary(of: PhotosSkipped.self) }
        XCTAssertEqual(tracked.value, 0)
        photo[PhotosSkipped.self] = 1
        photo.completedUnitCount = 1
        XCTAssertEqual(tracked.changed.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(progress.summary(of: PhotosSkipped.self), 1, "stored before the change is announced")
    }

    /// Setting a value is a change its node's observers and its ancestors' hear of, with no count moving.
    func test_a_value_set_alone_is_announced() {
        let album = ProgressNode(totalUnitCount: 2)
        let folder = ProgressNode(totalUnitCount: 1, parent: album, pendingUnitCount: 1)
        let photo = ProgressNode(totalUnitCount: 1, parent: folder, pendingUnitCount: 1)
        let progress = album.observable
        let tracked = track { progress.summary(of: PhotosSkipped.self) }
        XCTAssertEqual(tracked.value, 0)
        photo[PhotosSkipped.self] = 4
        XCTAssertEqual(tracked.changed.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(progress.summary(of: PhotosSkipped.self), 4)
        XCTAssertEqual(album.fractionCompleted, 0, "no count moved")
    }

    /// A delivery that finds the summary unchanged does not announce it: a view that shows only the
    /// summary is not re-rendered when a count moves.
    func test_a_delivery_that_leaves_the_summary_equal_does_not_announce_it() {
        let album = ProgressNode(totalUnitCount: 4)
        let progress = album.observable
        let summary = track { progress.summary(of: PhotosSkipped.self) }
        let fraction = track { progress.fractionCompleted }
        album.completedUnitCount = 1
        XCTAssertEqual(fraction.changed.wait(timeout: .now() + 10), .success)
        progress.bridge.waitForRunningDelivery()  // the delivery that announced the fraction has ended
        XCTAssertEqual(summary.changed.wait(timeout: .now()), .timedOut)
        XCTAssertEqual(progress.fractionCompleted, 0.25)
        XCTAssertEqual(progress.summary(of: PhotosSkipped.self), 0)
    }

    /// Each property is its own key path for the registrar: a change of one announces that one.
    func test_each_property_is_announced_on_its_own() {
        let album = ProgressNode(totalUnitCount: 2)
        let download = ProgressNode(totalUnitCount: 10, parent: album, pendingUnitCount: 1)
        let progress = album.observable
        download[UploadRate.self] = 500
        let skipped = track { progress.summary(of: PhotosSkipped.self) }
        let rate = track { progress.summary(of: UploadRate.self) }
        XCTAssertEqual(rate.value, 500)
        download.completedUnitCount = 10  // the finished download's rate is dropped
        XCTAssertEqual(rate.changed.wait(timeout: .now() + 10), .success)
        progress.bridge.waitForRunningDelivery()
        XCTAssertEqual(skipped.changed.wait(timeout: .now()), .timedOut)
        XCTAssertEqual(progress.summary(of: UploadRate.self), 0)
    }

    /// A summary nobody read is not followed; one that was is, from then on.
    func test_only_summaries_that_were_read_are_followed() {
        let progress = ProgressNode(totalUnitCount: 1).observable
        XCTAssertEqual(progress.bridge.followedSummaryProperties, [])
        _ = progress.summary(of: PhotosSkipped.self)
        XCTAssertEqual(progress.bridge.followedSummaryProperties, [ObjectIdentifier(PhotosSkipped.self)])
        XCTAssertEqual(progress.bridge.trackedProperties, [], "no row of the table is read for it")
    }

    /// A loop that re-arms tracking after each change, as a SwiftUI body, sees the last summary: 3 photos of
    /// 6 skipped, from 3 threads.
    func test_a_loop_that_rearms_tracking_sees_the_last_summary() {
        let album = ProgressNode(totalUnitCount: 6)
        let photos = (0..<6).map { _ in ProgressNode(totalUnitCount: 1, parent: album, pendingUnitCount: 1) }
        let progress = album.observable
        DispatchQueue.concurrentPerform(iterations: 3) { thread in
            for index in stride(from: thread, to: 6, by: 3) {
                if index % 2 == 0 { photos[index][PhotosSkipped.self] = 1 }
                photos[index].completedUnitCount = 1
            }
        }
        var seen: (skipped: Int, finished: Bool) = (0, false)
        while !(seen.finished && seen.skipped == 3) {
            let tracked = track { (progress.summary(of: PhotosSkipped.self), progress.isFinished) }
            seen = (tracked.value.0, tracked.value.1)
            if seen.finished && seen.skipped == 3 { break }
            XCTAssertEqual(tracked.changed.wait(timeout: .now() + 10), .success, "stuck at \(seen)")
        }
        XCTAssertEqual(progress.summary(of: PhotosSkipped.self), 3)
    }
}
