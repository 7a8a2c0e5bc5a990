// swift-format-ignore-file
// (The guides show this file's snippets verbatim, their end-of-line comments aligned by hand.)
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import ProgressTree
import Synchronization
import TestSupport
import XCTest

// The snippets of Docs/GettingStarted.md, Docs/Composition.md and Docs/Properties.md, as tests, and the
// check that the guides show every snippet verbatim.
//
// Each snippet sits between `// BEGIN snippet: NAME` and `// END snippet: NAME`; the guide shows it after
// `<!-- snippet: NAME -->` (its leading `import` lines are not part of the comparison). `print` is shadowed
// by a closure that records the lines, and each test checks them against the values the guide gives in
// its comments.

final class GuideSnippetsTests: XCTestCase {
    // MARK: Docs/GettingStarted.md

    func test_guide_getting_started_first_node() {
        let printed = PrintedLines()
        let print: @Sendable (Any) -> Void = { printed.append($0) }
        // BEGIN snippet: getting-started-first-node
        let download = ProgressNode(totalUnitCount: 200)
        download.advance(by: 50)                 // safe from any thread
        print(download.fractionCompleted)        // 0.25
        download.completedUnitCount = 200
        print(download.isFinished)               // true
        // END snippet: getting-started-first-node
        XCTAssertEqual(printed.lines, ["0.25", "true"])
    }

    func test_guide_getting_started_batch_reporter() throws {
        let printed = PrintedLines()
        let print: @Sendable (Any) -> Void = { printed.append($0) }
        // BEGIN snippet: getting-started-batch-reporter
        let lines = ProgressNode(totalUnitCount: 1_000_000)
        var checksum = 0
        try lines.withBatchReporter { reporter in
            for line in 0..<1_000_000 {
                if line % 10_000 == 0 { try reporter.checkCancellation() }  // asking publishes what waits
                checksum &+= line
                reporter.advance()                // no atomic: the node hears every 1,000th unit
            }
        }
        print(lines.isFinished)                   // true: finished by the last unit, not before
        // END snippet: getting-started-batch-reporter
        XCTAssertEqual(printed.lines, ["true"])
        XCTAssertEqual(checksum, 499_999_500_000)
        XCTAssertEqual(lines.completedUnitCount, 1_000_000)
    }

    func test_guide_getting_started_tree() {
        let printed = PrintedLines()
        let print: @Sendable (Any) -> Void = { printed.append($0) }
        // BEGIN snippet: getting-started-tree
        /// Knows nothing about photos or albums: it reports on a node of its own.
        func applyFilter() {
            let filter = ProgressNode(totalUnitCount: 4)  // attaches to the current node, if there is one
            for _ in 0..<4 { filter.advance() }
        }

        let album = ProgressNode(totalUnitCount: 2)
        let photo = ProgressNode(totalUnitCount: 10, parent: album, pendingUnitCount: 1)
        let download = ProgressNode(totalUnitCount: 1_000, parent: photo, pendingUnitCount: 9)

        download.completedUnitCount = 500
        print(photo.fractionCompleted)           // 0.45: half of 9 units of 10
        print(album.fractionCompleted)           // 0.225: 0.45 of 1 unit of 2
        download.completedUnitCount = 1_000      // finished: 9 units credited to the photo
        photo.performAsCurrent(withPendingUnitCount: 1) {
            applyFilter()                        // its node attaches to `photo` for the last unit
        }
        print(album.fractionCompleted)           // 0.5: one photo of two
        // END snippet: getting-started-tree
        XCTAssertEqual(printed.lines, ["0.45", "0.225", "0.5"])
        XCTAssertEqual(photo.completedUnitCount, 10)
        XCTAssertEqual(album.completedUnitCount, 1)
    }

    func test_guide_getting_started_observing() async {
        let printed = PrintedLines()
        let print: @Sendable (Any) -> Void = { printed.append($0) }
        // BEGIN snippet: getting-started-observing
        let job = ProgressNode.discreteProgress(totalUnitCount: 4)
        let display = DispatchQueue(label: "progress display")
        let observation = job.observe(\.fractionCompleted, on: display) { _, change in
            print("\(Int(change.newValue * 100))%")  // the last line printed is "100%"
        }
        for _ in 0..<4 { job.advance() }
        await observation.waitForLastDelivery()  // "100%" has been printed
        // END snippet: getting-started-observing
        XCTAssertEqual(printed.lines.last, "100%")
        observation.invalidate()
        XCTAssertTrue(Set(printed.lines).isSubset(of: ["25%", "50%", "75%", "100%"]), "\(printed.lines)")
    }

    func test_guide_getting_started_cancelling() {
        let printed = PrintedLines()
        let print: @Sendable (Any) -> Void = { printed.append($0) }
        // BEGIN snippet: getting-started-cancelling
        let album = ProgressNode(totalUnitCount: 2)
        let photo = ProgressNode(totalUnitCount: 10, parent: album, pendingUnitCount: 1)
        photo.cancellationHandler = { print("photo cancelled") }  // runs inside cancel(), on its thread

        album.cancel()                           // flows down to every attached node
        print(photo.isCancelled)                 // true
        do {
            try photo.checkCancellation()        // what a work loop calls between two steps
        } catch {
            print(error)                         // CancellationError()
        }
        // END snippet: getting-started-cancelling
        XCTAssertEqual(printed.lines, ["photo cancelled", "true", "CancellationError()"])
    }

    // MARK: Docs/Composition.md

    func test_guide_composition_weights() {
        let printed = PrintedLines()
        let print: @Sendable (Any) -> Void = { printed.append($0) }
        // BEGIN snippet: composition-weights
        let photo = ProgressNode(totalUnitCount: 10)
        let download = ProgressNode(totalUnitCount: 2_000_000, parent: photo, pendingUnitCount: 9)
        let filter = ProgressNode.discreteProgress(totalUnitCount: 1)
        photo.addChild(filter, withPendingUnitCount: 1)

        download.completedUnitCount = 500_000    // a quarter of the bytes
        print(photo.fractionCompleted)           // 0.225: 9 × 0.25 of 10
        download.completedUnitCount = 1_000_000  // half of the bytes
        print(photo.fractionCompleted)           // 0.45: 9 × 0.5 of 10
        print(photo.completedUnitCount)          // 0: partial progress is not counted here
        download.completedUnitCount = 2_000_000  // the download finishes
        print(photo.completedUnitCount)          // 9: its share is credited
        print(photo.fractionCompleted)           // 0.9
        filter.advance()                         // the filter finishes
        print(photo.completedUnitCount)          // 10
        print(photo.isFinished)                  // true
        // END snippet: composition-weights
        XCTAssertEqual(printed.lines, ["0.225", "0.45", "0", "9", "0.9", "10", "true"])
        XCTAssertTrue(photo.children.isEmpty, "both children finished and were detached")
    }

    func test_guide_composition_explicit() {
        let printed = PrintedLines()
        let print: @Sendable (Any) -> Void = { printed.append($0) }
        // BEGIN snippet: composition-explicit
        let parent = ProgressNode(totalUnitCount: 10)
        let child = ProgressNode(totalUnitCount: 100, parent: parent, pendingUnitCount: 5)

        // A node created elsewhere (for example an operation's `progress`), already half done:
        let operation = ProgressNode.discreteProgress(totalUnitCount: 2)
        operation.advance()
        parent.addChild(operation, withPendingUnitCount: 5)
        print(parent.fractionCompleted)  // 0.25: 5 × 0.5 of 10, counted as soon as it is added
        child.completedUnitCount = 100
        print(parent.completedUnitCount) // 5: `child` finished and was credited
        // END snippet: composition-explicit
        XCTAssertEqual(printed.lines, ["0.25", "5"])
        XCTAssertEqual(parent.fractionCompleted, 0.75)
    }

    func test_guide_composition_thread_local() {
        let printed = PrintedLines()
        let print: @Sendable (Any) -> Void = { printed.append($0) }
        // BEGIN snippet: composition-thread-local
        /// A library function: it knows nothing about the caller's tree.
        func resize(_ images: [String]) {
            let progress = ProgressNode(totalUnitCount: Int64(images.count))  // attaches to the current node
            for _ in images { progress.advance() }
        }

        let export = ProgressNode(totalUnitCount: 10)
        export.becomeCurrent(withPendingUnitCount: 6)
        resize(["a.jpg", "b.jpg", "c.jpg"])
        export.resignCurrent()
        print(export.completedUnitCount)  // 6: resize's node attached for 6 units, finished and was credited

        export.performAsCurrent(withPendingUnitCount: 4) {  // resigns even when the closure throws
            resize(["d.jpg"])
        }
        print(export.isFinished)          // true
        // END snippet: composition-thread-local
        XCTAssertEqual(printed.lines, ["6", "true"])
        XCTAssertNil(ProgressNode.current())
    }

    func test_composition_thread_local_attaches_rather_than_crediting_at_the_end() {
        // "6" would also be printed if resize's node did not attach (the scope credits its count when it
        // ends). Check that it attached: mid-way, the parent shows the partial work.
        let export = ProgressNode(totalUnitCount: 10)
        let midway = export.performAsCurrent(withPendingUnitCount: 6) { () -> Double in
            let progress = ProgressNode(totalUnitCount: 3)
            progress.advance()
            return export.fractionCompleted
        }
        XCTAssertEqual(midway, 0.2)  // 6 × 1/3 of 10
    }

    func test_guide_composition_task_local() async throws {
        let printed = PrintedLines()
        let print: @Sendable (Any) -> Void = { printed.append($0) }
        // BEGIN snippet: composition-task-local
        /// An async library function: it creates its node where it starts.
        func upload(_ files: [String]) async throws {
            let progress = ProgressNode(totalUnitCount: Int64(files.count))  // attaches to the current node
            for _ in files {
                try await Task.sleep(for: .milliseconds(1))
                progress.advance()
            }
        }

        let backup = ProgressNode(totalUnitCount: 10)
        try await backup.withCurrent(pendingUnitCount: 4) {
            try await upload(["a", "b", "c"])
        }
        print(backup.completedUnitCount)  // 4

        // Concurrent children: one scope per child task, each for its own share.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for folder in [["d"], ["e", "f"], ["g"]] {
                group.addTask { try await backup.withCurrent(pendingUnitCount: 2) { try await upload(folder) } }
            }
            try await group.waitForAll()
        }
        print(backup.isFinished)          // true
        // END snippet: composition-task-local
        XCTAssertEqual(printed.lines, ["4", "true"])
        XCTAssertEqual(backup.completedUnitCount, 10)
    }

    func test_composition_concurrent_scopes_each_attach_their_own_child() async {
        // One `withCurrent` per child task: each child task's node attaches to its own scope, for its share.
        let backup = ProgressNode(totalUnitCount: 6)
        let gate = AsyncStream<Void>.makeStream()
        let started = AsyncStream<Void>.makeStream()
        let children = await withTaskGroup(of: ProgressNode.self, returning: [ProgressNode].self) { group in
            for _ in 0..<3 {
                group.addTask {
                    await backup.withCurrent(pendingUnitCount: 2) { () async -> ProgressNode in
                        let node = ProgressNode(totalUnitCount: 2)
                        node.advance()
                        started.continuation.yield()
                        for await _ in gate.stream { break }
                        return node
                    }
                }
            }
            var waiting = 3
            for await _ in started.stream {
                waiting -= 1
                if waiting == 0 { break }
            }
            XCTAssertEqual(backup.fractionCompleted, 0.5, "three children of 2 units, each half done")
            XCTAssertEqual(backup.children.count, 3)
            gate.continuation.finish()
            return await group.reduce(into: []) { $0.append($1) }
        }
        XCTAssertEqual(children.count, 3)
        XCTAssertEqual(backup.completedUnitCount, 0, "unfinished children: nothing credited")
    }

    func test_guide_composition_share() {
        let printed = PrintedLines()
        let print: @Sendable (Any) -> Void = { printed.append($0) }
        // BEGIN snippet: composition-share
        /// Imports one photo, for the caller's share of its work or for no one's.
        func importPhoto(_ name: String, progress: consuming ProgressShare? = nil) {
            if name.hasPrefix(".") { return }  // skipped: the share is dropped, its units count as done
            let photo = progress?.start(totalUnitCount: 10) ?? .discreteProgress(totalUnitCount: 10)
            photo.advance(by: 9)               // downloaded
            photo.advance(by: 1)               // filtered: finished, the share's units are credited
        }

        /// Imports an album: a unit for each file, handed to `importPhoto` as a share.
        func importAlbum(_ names: [String], progress album: ProgressNode) {
            for name in names {
                let share = album.share(pendingUnitCount: 1)
                print(album.fractionCompleted) // the share's unit counts as not done yet
                importPhoto(name, progress: share)
            }
        }

        let album = ProgressNode(totalUnitCount: 4)
        importAlbum(["a.jpg", ".DS_Store", "b.jpg", "c.jpg"], progress: album)  // 0.0, 0.25, 0.5, 0.75
        print(album.completedUnitCount)        // 4
        importPhoto("d.jpg")                   // reports to no one
        // END snippet: composition-share
        XCTAssertEqual(printed.lines, ["0.0", "0.25", "0.5", "0.75", "4"])
        XCTAssertTrue(album.isFinished)
    }

    func test_guide_composition_share_tasks() async throws {
        let printed = PrintedLines()
        let print: @Sendable (Any) -> Void = { printed.append($0) }
        // BEGIN snippet: composition-share-tasks
        /// An async function: it reports on the node its share gives it, and stops when that is cancelled.
        func upload(_ files: [String], progress: consuming ProgressShare) async throws {
            let node = progress.start(totalUnitCount: Int64(files.count))
            for _ in files {
                try node.checkCancellation()
                await Task.yield()
                node.advance()
            }
        }

        let backup = ProgressNode(totalUnitCount: 6)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for folder in [["a", "b"], ["c"], ["d", "e", "f"]] {
                // Each task makes its share: a share cannot be moved into a task's closure.
                group.addTask { try await upload(folder, progress: backup.share(pendingUnitCount: 2)) }
            }
            try await group.waitForAll()
        }
        print(backup.completedUnitCount)       // 6

        let cancelled = ProgressNode(totalUnitCount: 1)
        cancelled.cancel()
        do {
            try await upload(["g"], progress: cancelled.share(pendingUnitCount: 1))
        } catch {
            print(error)                       // CancellationError(): the share started cancelled
        }
        print(cancelled.completedUnitCount)    // 0: its node was cancelled, not finished
        // END snippet: composition-share-tasks
        XCTAssertEqual(printed.lines, ["6", "CancellationError()", "0"])
        XCTAssertTrue(backup.isFinished)
    }

    func test_guide_composition_first_child() {
        let printed = PrintedLines()
        let print: @Sendable (Any) -> Void = { printed.append($0) }
        // BEGIN snippet: composition-first-child
        let parent = ProgressNode(totalUnitCount: 10)
        let (first, second) = parent.performAsCurrent(withPendingUnitCount: 10) {
            (ProgressNode(totalUnitCount: 1), ProgressNode(totalUnitCount: 1))
        }
        second.advance()
        print(parent.fractionCompleted)  // 0.0: `second` did not attach
        first.advance()
        print(parent.fractionCompleted)  // 1.0: `first` had taken all 10 units
        // END snippet: composition-first-child
        XCTAssertEqual(printed.lines, ["0.0", "1.0"])
    }

    func test_composition_first_child_rule_for_init_parent() {
        // "`ProgressNode(parent:userInfo:)` follows the same rule": attaches only while the count is unclaimed.
        let parent = ProgressNode(totalUnitCount: 10)
        let (first, second) = parent.performAsCurrent(withPendingUnitCount: 10) {
            (ProgressNode(parent: parent), ProgressNode(parent: parent))
        }
        XCTAssertTrue(parent.children.count == 1 && parent.children[0] === first)
        second.totalUnitCount = 1
        second.advance()
        XCTAssertEqual(parent.completedUnitCount, 0)
    }

    func test_guide_composition_no_child() {
        let printed = PrintedLines()
        let print: @Sendable (Any) -> Void = { printed.append($0) }
        // BEGIN snippet: composition-no-child
        let job = ProgressNode(totalUnitCount: 10)
        job.performAsCurrent(withPendingUnitCount: 4) {
            // This step created no node: nothing to do, or code that does not report progress.
        }
        print(job.completedUnitCount)  // 4: credited when the scope ended
        print(job.fractionCompleted)   // 0.4
        // END snippet: composition-no-child
        XCTAssertEqual(printed.lines, ["4", "0.4"])
    }

    func test_composition_no_child_credit_also_when_the_scope_throws() {
        struct Failure: Error {}
        let job = ProgressNode(totalUnitCount: 10)
        XCTAssertThrowsError(try job.performAsCurrent(withPendingUnitCount: 4) { throw Failure() })
        XCTAssertThrowsError(try job.withCurrent(pendingUnitCount: 2) { throw Failure() })
        XCTAssertEqual(job.completedUnitCount, 6)
    }

    func test_composition_a_node_created_after_its_scope_ended_does_not_attach() async {
        // "That includes a node created by an unstructured `Task { … }` started inside `withCurrent`."
        let parent = ProgressNode(totalUnitCount: 10)
        let gate = AsyncStream<Void>.makeStream()
        let late: Task<ProgressNode, Never> = parent.withCurrent(pendingUnitCount: 4) {
            Task {
                for await _ in gate.stream { break }
                return ProgressNode(totalUnitCount: 5)  // sees the ended scope: its count is gone
            }
        }
        XCTAssertEqual(parent.completedUnitCount, 4, "credited when the scope ended")
        gate.continuation.yield()
        let node = await late.value
        XCTAssertTrue(parent.children.isEmpty)
        node.advance(by: 5)
        XCTAssertEqual(parent.completedUnitCount, 4)
    }

    func test_guide_composition_finishing() {
        let printed = PrintedLines()
        let print: @Sendable (Any) -> Void = { printed.append($0) }
        // BEGIN snippet: composition-finishing
        let parent = ProgressNode(totalUnitCount: 2)
        let child = ProgressNode(totalUnitCount: 1, parent: parent, pendingUnitCount: 1)
        child.completedUnitCount = 1      // finished: 1 unit credited, and the parent lets the child go
        child.completedUnitCount = 0      // too late: the parent keeps the credit
        print(parent.completedUnitCount)  // 1
        print(parent.fractionCompleted)   // 0.5
        print(parent.children.count)      // 0
        // END snippet: composition-finishing
        XCTAssertEqual(printed.lines, ["1", "0.5", "0"])
    }

    func test_composition_finishing_detached_child_is_not_cancelled_and_credit_finishes_ancestors() {
        let grandparent = ProgressNode(totalUnitCount: 2)
        let parent = ProgressNode(totalUnitCount: 1, parent: grandparent, pendingUnitCount: 1)
        let child = ProgressNode(totalUnitCount: 1, parent: parent, pendingUnitCount: 1)
        child.advance()  // finishes the child, whose credit finishes the parent, credited to the grandparent
        XCTAssertTrue(parent.isFinished)
        XCTAssertEqual(grandparent.completedUnitCount, 1)
        XCTAssertTrue(grandparent.children.isEmpty)
        grandparent.cancel()
        XCTAssertFalse(parent.isCancelled)
        XCTAssertFalse(child.isCancelled)
        child.totalUnitCount = 10  // un-finishing a detached child moves nothing
        XCTAssertEqual(grandparent.fractionCompleted, 0.5)
    }

    func test_guide_composition_reweighting() {
        let printed = PrintedLines()
        let print: @Sendable (Any) -> Void = { printed.append($0) }
        // BEGIN snippet: composition-reweighting
        let parent = ProgressNode(totalUnitCount: 100)
        let child = ProgressNode(totalUnitCount: 100, parent: parent, pendingUnitCount: 10)
        child.completedUnitCount = 50
        print(parent.fractionCompleted)   // 0.05: half of 10 units of 100
        parent.totalUnitCount = 200
        print(parent.fractionCompleted)   // 0.025: still 10 units, now of 200
        child.totalUnitCount = 200
        print(parent.fractionCompleted)   // 0.0125: the child is a quarter done
        child.totalUnitCount = 50
        print(parent.completedUnitCount)  // 10: lowering the child's total to its count finished it
        // END snippet: composition-reweighting
        XCTAssertEqual(printed.lines, ["0.05", "0.025", "0.0125", "10"])
        XCTAssertEqual(parent.fractionCompleted, 0.05)
    }

    func test_guide_composition_indeterminate() {
        let printed = PrintedLines()
        let print: @Sendable (Any) -> Void = { printed.append($0) }
        // BEGIN snippet: composition-indeterminate
        let photo = ProgressNode(totalUnitCount: 10)
        let download = ProgressNode(totalUnitCount: -1, parent: photo, pendingUnitCount: 9)  // size unknown
        download.completedUnitCount = 300
        print(download.isIndeterminate)  // true
        print(photo.fractionCompleted)   // 0.0: an indeterminate child adds nothing
        print(photo.isIndeterminate)     // false
        download.totalUnitCount = 600    // the size is known now
        print(photo.fractionCompleted)   // 0.45
        // END snippet: composition-indeterminate
        XCTAssertEqual(printed.lines, ["true", "0.0", "false", "0.45"])
    }

    func test_composition_a_parent_with_a_negative_total_accumulates_credits() {
        let parent = ProgressNode(totalUnitCount: -1)
        let child = ProgressNode(totalUnitCount: 2, parent: parent, pendingUnitCount: 1)
        child.advance()
        XCTAssertEqual(parent.fractionCompleted, 0, "partial child progress: 0, the parent is indeterminate")
        child.advance()
        XCTAssertEqual(parent.completedUnitCount, 1)
        XCTAssertEqual(parent.fractionCompleted, 0)
        parent.totalUnitCount = 4
        XCTAssertEqual(parent.fractionCompleted, 0.25)
    }

    func test_guide_composition_overshoot() {
        let printed = PrintedLines()
        let print: @Sendable (Any) -> Void = { printed.append($0) }
        // BEGIN snippet: composition-overshoot
        let copy = ProgressNode(totalUnitCount: 10)
        copy.completedUnitCount = 15
        print(copy.fractionCompleted)   // 1.0
        print(copy.completedUnitCount)  // 15: the raw count is kept

        let parent = ProgressNode(totalUnitCount: 2)
        let a = ProgressNode(totalUnitCount: 2, parent: parent, pendingUnitCount: 2)
        let b = ProgressNode(totalUnitCount: 2, parent: parent, pendingUnitCount: 2)
        a.advance()
        b.advance()
        print(parent.fractionCompleted) // 1.0: 2 × 0.5 + 2 × 0.5 = 2 units of 2
        // END snippet: composition-overshoot
        XCTAssertEqual(printed.lines, ["1.0", "15", "1.0"])
    }

    func test_guide_composition_progress_reporting() {
        let printed = PrintedLines()
        let print: @Sendable (Any) -> Void = { printed.append($0) }
        // BEGIN snippet: composition-progress-reporting
        /// A download that reports its own progress, in bytes.
        final class Download: ProgressTree.ProgressReporting, Sendable {
            let progress = ProgressNode.discreteProgress(totalUnitCount: 1_000)
            func receive(_ bytes: Int64) { progress.advance(by: bytes) }
        }

        let album = ProgressNode(totalUnitCount: 4)
        let operation = Download()
        album.addChild(operation.progress, withPendingUnitCount: 1)
        operation.receive(500)
        print(album.fractionCompleted)  // 0.125
        // END snippet: composition-progress-reporting
        XCTAssertEqual(printed.lines, ["0.125"])
    }

    // MARK: Docs/Properties.md

    func test_guide_properties_photo_import() {
        let printed = PrintedLines()
        let print: @Sendable (Any) -> Void = { printed.append($0) }
        // BEGIN snippet: properties-photo-import
        /// Photos an import skipped (already in the library): a count, kept when a photo's node finishes.
        enum PhotosSkipped: ProgressProperty {
            static var defaultValue: Int { 0 }
            static var defaultSummary: Int { 0 }
            static func reduce(into summary: inout Int, value: Int) { summary += value }
            static func merge(_ a: Int, _ b: Int) -> Int { a + b }
        }

        /// Bytes per second of the downloads still running: a rate, dropped when a download ends.
        enum DownloadRate: ProgressProperty {
            static var defaultValue: Double { 0 }
            static var defaultSummary: Double { 0 }
            static func reduce(into summary: inout Double, value: Double) { summary += value }
            static func merge(_ a: Double, _ b: Double) -> Double { a + b }
            static func summaryLeftBehind(_ summary: Double, by outcome: ProgressPropertyOutcome) -> Double? {
                nil                              // a finished or failed download moves no more bytes
            }
        }

        let album = ProgressNode(totalUnitCount: 3)
        let photos = (0..<3).map { _ in ProgressNode(totalUnitCount: 1, parent: album, pendingUnitCount: 1) }
        photos[0][PhotosSkipped.self] = 1        // a duplicate: skipped
        photos[0].completedUnitCount = 1
        photos[1][DownloadRate.self] = 2_000_000
        photos[2][DownloadRate.self] = 500_000
        print(album.summary(of: PhotosSkipped.self))  // 1: the finished photo left its count behind
        print(album.summary(of: DownloadRate.self))   // 2500000.0
        photos[1].completedUnitCount = 1
        print(album.summary(of: DownloadRate.self))   // 500000.0: the finished download's rate is gone
        print("\(album.summary(of: PhotosSkipped.self)) skipped")  // 1 skipped
        // END snippet: properties-photo-import
        XCTAssertEqual(printed.lines, ["1", "2500000.0", "500000.0", "1 skipped"])
    }

    func test_guide_properties_file_counts() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)
        let folder = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        // BEGIN snippet: properties-file-counts
        folder[ProgressNode.FileTotalCount.self] = 10                 // as `folder.fileTotalCount = 10`
        let files = root.summary(of: ProgressNode.FileTotalCount.self)  // as `root.fileSummary.fileTotalCount`
        // END snippet: properties-file-counts
        XCTAssertEqual(files, 10)
        XCTAssertEqual(folder.fileTotalCount, 10)
    }

    func test_guide_properties_after_the_end() {
        let printed = PrintedLines()
        let print: @Sendable (Any) -> Void = { printed.append($0) }
        let said = Mutex<[String]>([])
        RefusedValues.redirect { message in said.withLock { $0.append(message) } }
        defer { RefusedValues.redirect(to: RefusedValues.writeToStandardError) }
        /// Warnings a check logged: a count, kept when its node finishes.
        enum Warnings: ProgressProperty {
            static var defaultValue: Int { 0 }
            static var defaultSummary: Int { 0 }
            static func reduce(into summary: inout Int, value: Int) { summary += value }
            static func merge(_ a: Int, _ b: Int) -> Int { a + b }
        }
        let root = ProgressNode.discreteProgress(totalUnitCount: 2)
        // BEGIN snippet: properties-after-the-end
        let folder = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 1)
        folder.localizedDescription = "Checking photos"
        folder[Warnings.self] += 1      // counted: the folder is still at work
        folder.advance(by: 10)          // its last unit: it leaves the root, and the root keeps its 1 warning
        folder[Warnings.self] += 1      // refused, and said once (below)
        print(folder[Warnings.self])    // 1
        print(root.summary(of: Warnings.self))  // 1
        // END snippet: properties-after-the-end
        folder[Warnings.self] = 7  // refused again, said no more
        XCTAssertEqual(printed.lines, ["1", "1"])
        XCTAssertEqual(folder[Warnings.self], 1)
        XCTAssertEqual(
            said.withLock { $0 },
            [
                "ProgressTree: a value of Warnings set on “Checking photos” after it finished or failed was not "
                    + "stored: its parent counted its values when it ended, and nothing after that reaches its "
                    + "ancestors. Set the value before the node's last unit (or before fail(_:)). (Said once per "
                    + "property.)\n"
            ])
        // A failed node refuses as a finished one does; a cancelled one is still attached, and counts.
        let failed = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        failed.fail(CancellationError())
        failed[Warnings.self] = 3
        XCTAssertEqual(failed[Warnings.self], 0)
        let cancelled = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 0)
        cancelled.cancel()
        cancelled[Warnings.self] = 4
        XCTAssertEqual(root.summary(of: Warnings.self), 5)
        XCTAssertEqual(said.withLock { $0.count }, 1, "said once per property")
    }

    func test_guide_properties_wire() {
        // BEGIN snippet: properties-wire
        /// Photos an import skipped, with a name on the wire: published, logged, and set by a mount.
        enum PhotosSkipped: WireProgressProperty {
            static let wireName = "photosSkipped"  // stable: other programs read it
            static var defaultValue: Int { 0 }
            static var defaultSummary: Int { 0 }
            static func reduce(into summary: inout Int, value: Int) { summary += value }
            static func merge(_ a: Int, _ b: Int) -> Int { a + b }
        }

        let photo = ProgressNode(totalUnitCount: 1)
        photo[PhotosSkipped.self] = 2
        // json, ProgressPublisher: {"v":1,…,"pausable":false,"properties":{"photosSkipped":2}}
        // plain:                   [  0%] …: started, 0 of 1, photosSkipped=2
        // END snippet: properties-wire
        XCTAssertTrue(
            photo.wireRecord(id: 1, parentID: nil).line.hasSuffix(#""pausable":false,"properties":{"photosSkipped":2}}"#))
    }

    // MARK: The guides show the snippets verbatim

    /// The guides written with this file; every `swift` code block in them is a snippet (the package
    /// manifest of Getting started, marked `<!-- manifest -->`, is checked by building a package with it).
    static let guides = [
        "GettingStarted.md", "Composition.md", "Properties.md", "Architecture.md", "Migrating.md", "Presentation.md",
    ]
    static let snippetFiles = [
        "Tests/ProgressTreeTests/GuideSnippetsTests.swift",
        "Tests/ProgressTreeTests/MigrationGuideTests.swift",
        "Tests/ProgressTreeTests/FailureTests.swift",
        "Tests/ProgressTreeTests/ActivityLoaderTests.swift",
        "Tests/ProgressTreePresentationTests/LabelPacerTests.swift",
        "Tests/ProgressTreePresentationTests/StepFlowTests.swift",
        "Tests/ProgressTreeTerminalTests/TerminalGuideSnippetsTests.swift",
        "Tests/ProgressTreeFoundationTests/FoundationGuideSnippetsTests.swift",
        "Tests/ProgressTreeStreamingTests/WirePropertiesTests.swift",
    ]

    func test_guide_snippets_match_the_guides() throws {
        let root = URLPath.packageRoot(of: #filePath)
        var regions: [String: [String]] = [:]
        for file in Self.snippetFiles {
            let lines = try URLPath.read(root + "/" + file).components(separatedBy: "\n")
            var current: (name: String, lines: [String])?
            for line in lines {
                let trimmed = line.trimmingLeadingSpaces
                if trimmed.hasPrefix("// BEGIN snippet: ") {
                    current = (String(trimmed.dropFirst("// BEGIN snippet: ".count)), [])
                } else if trimmed.hasPrefix("// END snippet: "), let region = current {
                    XCTAssertEqual(String(trimmed.dropFirst("// END snippet: ".count)), region.name, file)
                    XCTAssertNil(regions[region.name], "snippet \(region.name) defined twice")
                    regions[region.name] = Self.dedented(region.lines)
                    current = nil
                } else if current != nil {
                    current!.lines.append(line)
                }
            }
            XCTAssertNil(current, "unterminated snippet in \(file)")
        }

        var shown: Set<String> = []
        for guide in Self.guides {
            for swiftBlock in GuideSwiftBlock.all(in: try URLPath.read(root + "/Docs/" + guide)) {
                if swiftBlock.marker == "<!-- manifest -->" { continue }
                var block = swiftBlock.lines
                guard let name = swiftBlock.snippetName else {
                    XCTFail("\(guide): a swift block without a snippet marker: \(block.first ?? "")")
                    continue
                }
                while let first = block.first, first.hasPrefix("import ") || (first.isEmpty && block.count > 1) {
                    block.removeFirst()
                }
                guard let region = regions[name] else {
                    XCTFail("\(guide): snippet \(name) has no test")
                    continue
                }
                shown.insert(name)
                if block != region {
                    let firstDifference = zip(block, region).first { $0 != $1 }
                    XCTFail("""
                        \(guide): snippet \(name) differs from its test; first difference:
                          guide: \(firstDifference?.0 ?? "(\(block.count) lines)")
                          test:  \(firstDifference?.1 ?? "(\(region.count) lines)")
                        """)
                }
            }
        }
        XCTAssertEqual(Set(regions.keys).subtracting(shown), [], "snippets in the tests that no guide shows")
    }

    /// `lines` without their common indentation, and without trailing empty lines.
    static func dedented(_ lines: [String]) -> [String] {
        let indentation = lines.filter { !$0.isEmpty }.map { $0.count - $0.trimmingLeadingSpaces.count }.min() ?? 0
        var result = lines.map { $0.isEmpty ? $0 : String($0.dropFirst(indentation)) }
        while result.last == "" { result.removeLast() }
        return result
    }
}

/// File access for the snippet check.
enum URLPath {
    /// The package root: three levels above this test file (`Tests/ProgressTreeTests/<file>`).
    static func packageRoot(of filePath: String) -> String {
        var parts = filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/")
    }

    static func read(_ path: String) throws -> String {
        guard let file = fopen(path, "r") else { throw ReadError(path: path) }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count == 0 { break }
            bytes.append(contentsOf: buffer[..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    struct ReadError: Error, CustomStringConvertible {
        let path: String
        var description: String { "cannot read \(path)" }
    }
}

extension String {
    var trimmingLeadingSpaces: Substring { drop { $0 == " " } }
}
