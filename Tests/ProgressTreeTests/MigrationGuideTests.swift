// swift-format-ignore-file
// (The guides show this file's snippets verbatim, their end-of-line comments aligned by hand.)
import Dispatch
import Foundation
import ProgressTree
import Synchronization
import XCTest

// Docs/Migrating.md, checked.
//
// `PhotoProgressPort` is Apple's PhotoProgress sample model (Album, Photo, PhotoImport, PhotoDownload,
// PhotoFilter), ported from `Foundation.Progress` by following Docs/Migrating.md alone. UIKit is left out
// (an image is `Data`), and the fake network is driven by `deliver(_:)` instead of a timer, so that the
// test can check exact fractions. The regions between `// BEGIN snippet: NAME` and `// END snippet: NAME`
// are the guide's snippets: `GuideSnippetsTests.test_guide_snippets_match_the_guides` checks that the guide
// shows them verbatim.

enum PhotoProgressPort {
    /// "Downloads" a file URL, reporting its progress in bytes.
    final class PhotoDownload: ProgressTree.ProgressReporting, Sendable {
        let downloadURL: URL
        let progress: ProgressNode

        private struct State {
            var data: Data?
            var downloadedBytes = 0
            var isPaused = false
            var isDone = false
            var completionHandler: (@Sendable (_ data: Data?, _ error: (any Error)?) -> Void)?
        }
        private let state = Mutex(State())

        // BEGIN snippet: migrating-photo-download
        init(URL: URL) {
            downloadURL = URL
            progress = ProgressNode(parent: nil)
            // Indeterminate until we know how many bytes there are.
            progress.totalUnitCount = -1
            // Bytes, so the descriptions talk about files.
            progress.kind = .file
            progress.setUserInfoObject(ProgressNode.FileOperationKind.downloading, forKey: .fileOperationKindKey)
        }

        func willBeginDownload(_ downloadLength: Int) {
            progress.totalUnitCount = Int64(downloadLength)
            progress.isCancellable = true
            progress.cancellationHandler = {
                self.failDownloadWithError(CocoaError(.userCancelled))
            }
            progress.isPausable = true
            progress.pausingHandler = { self.state.withLock { $0.isPaused = true } }
            progress.resumingHandler = { self.state.withLock { $0.isPaused = false } }
        }
        // END snippet: migrating-photo-download

        var completionHandler: (@Sendable (_ data: Data?, _ error: (any Error)?) -> Void)? {
            get { state.withLock { $0.completionHandler } }
            set { state.withLock { $0.completionHandler = newValue } }
        }

        /// Starts the download of `data` (the sample read it from the URL).
        func start(data: Data) {
            state.withLock { $0.data = data }
            willBeginDownload(data.count)
        }

        /// The fake network: `bytes` more bytes arrived (ignored while paused, after a failure or the end).
        func deliver(_ bytes: Int) {
            let event: (Data, Int, Bool)? = state.withLock { state in
                guard let data = state.data, !state.isPaused, !state.isDone else { return nil }
                state.downloadedBytes = min(state.downloadedBytes + bytes, data.count)
                if state.downloadedBytes == data.count { state.isDone = true }
                return (data, state.downloadedBytes, state.isDone)
            }
            guard let (data, count, finished) = event else { return }
            if finished { didFinishDownload(data) } else { didDownloadData(data, numberOfBytes: count) }
        }

        func didDownloadData(_ data: Data, numberOfBytes: Int) {
            progress.completedUnitCount = Int64(numberOfBytes)
        }

        func didFinishDownload(_ downloadedData: Data) {
            progress.completedUnitCount = Int64(downloadedData.count)
            callCompletionHandler(data: downloadedData, error: nil)
        }

        func failDownloadWithError(_ error: any Error) {
            let wasDone = state.withLock { state in
                defer { state.isDone = true }
                return state.isDone
            }
            if !wasDone { callCompletionHandler(data: nil, error: error) }
        }

        private func callCompletionHandler(data: Data?, error: (any Error)?) {
            let handler = state.withLock { state in
                defer { state.completionHandler = nil }
                return state.completionHandler
            }
            handler?(data, error)
        }
    }

    // BEGIN snippet: migrating-photo-filter
    /// Applies a filter; reports through implicit composition.
    enum PhotoFilter {
        static func filteredImage(_ image: Data) -> Data? {
            // First thing: this node attaches to the current node. Indeterminate: no idea how long it takes.
            let progress = ProgressNode(totalUnitCount: -1)
            progress.isCancellable = false
            progress.isPausable = false

            let output = applyEffect(to: image)  // the sample ran a Core Image filter here

            // We have finished.
            progress.completedUnitCount = 1
            progress.totalUnitCount = 1
            return output
        }
    }
    // END snippet: migrating-photo-filter

    /// The "Core Image filter" of the port; lets the test look at the tree while the filter runs.
    static func applyEffect(to image: Data) -> Data {
        whileFiltering.withLock { $0 }?()
        return Data(image.reversed())
    }

    /// Called by `applyEffect(to:)` while a filter runs (test scaffolding, not part of the sample).
    static let whileFiltering = Mutex<(@Sendable () -> Void)?>(nil)

    // BEGIN snippet: migrating-photo-import
    /// The import of one photo: a download (9 units of 10), then a filter (1 unit).
    final class PhotoImport: ProgressTree.ProgressReporting, Sendable {
        let progress: ProgressNode
        let download: PhotoDownload
        private let handler = Mutex<(@Sendable (_ image: Data?, _ error: (any Error)?) -> Void)?>(nil)

        init(URL: URL) {
            // The download takes up 90%, the filter the rest.
            progress = ProgressNode.discreteProgress(totalUnitCount: 10)
            download = PhotoDownload(URL: URL)
        }

        var completionHandler: (@Sendable (_ image: Data?, _ error: (any Error)?) -> Void)? {
            get { handler.withLock { $0 } }
            set { handler.withLock { $0 = newValue } }
        }

        func start(data: Data) {
            // Explicit composition: the download is 9 of our 10 units.
            progress.addChild(download.progress, withPendingUnitCount: 9)

            download.completionHandler = { data, error in
                guard let imageData = data else {
                    self.callCompletionHandler(image: nil, error: error)
                    return
                }
                // Implicit composition: the filter's node attaches to ours for 1 unit.
                self.progress.becomeCurrent(withPendingUnitCount: 1)
                let filteredImage = PhotoFilter.filteredImage(imageData)
                self.progress.resignCurrent()

                self.callCompletionHandler(image: filteredImage, error: nil)
            }
            download.start(data: data)
        }

        private func callCompletionHandler(image: Data?, error: (any Error)?) {
            let handler = handler.withLock { handler in
                defer { handler = nil }
                return handler
            }
            handler?(image, error)
        }
    }
    // END snippet: migrating-photo-import

    /// A photo that can be imported.
    final class Photo: Sendable {
        let imageURL: URL
        let size: Int
        private let state = Mutex<(image: Data?, photoImport: PhotoImport?, error: (any Error)?)>((nil, nil, nil))

        init(URL: URL, size: Int) {
            imageURL = URL
            self.size = size
        }

        var image: Data? { state.withLock { $0.image } }
        var error: (any Error)? { state.withLock { $0.error } }
        var photoImport: PhotoImport? { state.withLock { $0.photoImport } }

        func startImport() -> ProgressNode {
            let newImport = PhotoImport(URL: imageURL)
            newImport.completionHandler = { image, error in
                self.state.withLock { state in
                    if let image { state.image = image } else { state.error = error }
                    state.photoImport = nil
                }
            }
            state.withLock { $0.photoImport = newImport }
            newImport.start(data: Data(repeating: 7, count: size))
            return newImport.progress
        }
    }

    /// An album of photos.
    final class Album: Sendable {
        let photos: [Photo]

        init(photos: [Photo]) {
            self.photos = photos
        }

        func importPhotos() -> ProgressNode {
            let progress = ProgressNode(parent: nil)
            progress.totalUnitCount = Int64(photos.count)
            for photo in photos {
                let importProgress = photo.startImport()
                progress.addChild(importProgress, withPendingUnitCount: 1)
            }
            return progress
        }
    }

    /// What the sample's `PhotosViewController` shows, without UIKit.
    @MainActor
    final class PhotosScreen {
        let overallProgress: ProgressNode
        private(set) var progressShown: Double = 0
        private(set) var isProgressHidden = true
        private(set) var toolbar: [String] = []
        private var observation: ProgressObservation?

        init(overallProgress: ProgressNode) {
            self.overallProgress = overallProgress
        }

        func startObserving() {
            // BEGIN snippet: migrating-view-controller
            observation = overallProgress.observe(\.snapshot, on: .main) { _, change in
                MainActor.assumeIsolated {  // the handler runs on the main queue
                    self.updateProgressView(change.newValue)
                    self.updateToolbar(change.newValue)
                }
            }
            // END snippet: migrating-view-controller
        }

        func stopObserving() {
            observation?.invalidate()
        }

        func updateProgressView(_ snapshot: ProgressNode.Snapshot) {
            progressShown = snapshot.fractionCompleted
            isProgressHidden = snapshot.isFinished || snapshot.isCancelled
        }

        func updateToolbar(_ snapshot: ProgressNode.Snapshot) {
            if snapshot.isFinished || snapshot.isCancelled {
                toolbar = ["Reset"]
            } else {
                toolbar = ["Cancel", snapshot.isPaused ? "Resume" : "Pause"]
            }
        }
    }
}

/// Lines printed by a guide snippet (the tests shadow `print` with a closure that appends here).
final class PrintedLines: Sendable {
    private let storage = Mutex<[String]>([])

    func append(_ item: Any) {
        let line = "\(item)"
        storage.withLock { $0.append(line) }
    }

    var lines: [String] { storage.withLock { $0 } }
}

final class MigrationGuideTests: XCTestCase {
    typealias Port = PhotoProgressPort

    // MARK: The port of PhotoProgress

    func test_ported_PhotoProgress_reports_exact_fractions_at_each_step() {
        let photos = (1...4).map { Port.Photo(URL: URL(fileURLWithPath: "/Photos/IMG_000\($0).jpg"), size: 1_000) }
        let album = Port.Album(photos: photos)
        let overall = album.importPhotos()
        let imports = photos.map { $0.photoImport! }
        let downloads = imports.map(\.download)

        // Every download has started: 1,000 bytes each, nothing received yet.
        XCTAssertEqual(overall.fractionCompleted, 0)
        XCTAssertEqual(overall.completedUnitCount, 0)
        XCTAssertEqual(downloads[0].progress.totalUnitCount, 1_000)
        XCTAssertEqual(downloads[0].progress.localizedAdditionalDescription, "Zero KB of 1 KB")

        downloads[0].deliver(500)  // photo 1: 9 × 0.5 of 10, so 0.45 of 1 unit of 4
        XCTAssertEqual(overall.fractionCompleted, 0.1125)
        // Descriptions on Linux too (swift-corelibs-foundation gives "" for both).
        XCTAssertEqual(downloads[0].progress.localizedDescription, "Downloading files…")
        XCTAssertEqual(downloads[0].progress.localizedAdditionalDescription, "500 bytes of 1 KB")
        XCTAssertEqual(overall.localizedDescription, "11% completed")

        // While the filter runs, its node is the photo import's only child (the download finished and was
        // released): it attached implicitly, through becomeCurrent.
        let duringFilter = Mutex<(fraction: Double, childTotals: [Int64], current: Bool)?>(nil)
        Port.whileFiltering.withLock {
            $0 = {
                let child = imports[0].progress.children.map(\.totalUnitCount)
                let current = ProgressNode.current() === imports[0].progress
                duringFilter.withLock { $0 = (overall.fractionCompleted, child, current) }
            }
        }
        defer { Port.whileFiltering.withLock { $0 = nil } }
        downloads[0].deliver(500)
        let seen = duringFilter.withLock { $0 }
        XCTAssertEqual(seen?.fraction, 0.225)  // the download's 9 units credited; the filter indeterminate
        XCTAssertEqual(seen?.childTotals, [-1])
        XCTAssertEqual(seen?.current, true)
        XCTAssertEqual(overall.fractionCompleted, 0.25)
        XCTAssertEqual(overall.completedUnitCount, 1)
        XCTAssertEqual(photos[0].image, Data(repeating: 7, count: 1_000))
        XCTAssertNil(photos[0].photoImport)
        XCTAssertTrue(imports[0].progress.isFinished)

        downloads[1].deliver(500)  // (1 + 0.45) / 4
        XCTAssertEqual(overall.fractionCompleted, 0.3625)

        overall.pause()  // the pausing handlers have run when pause() returns: no wait needed
        XCTAssertTrue(downloads[1].progress.isPaused)
        downloads[1].deliver(500)  // ignored while paused
        XCTAssertEqual(overall.fractionCompleted, 0.3625)
        XCTAssertEqual(downloads[1].progress.completedUnitCount, 500)

        overall.resume()
        downloads[1].deliver(250)  // 750 of 1,000: (1 + 0.675) / 4
        XCTAssertEqual(overall.fractionCompleted, 0.41875)

        overall.cancel()  // the cancellation handlers have run, and the photos recorded the error
        XCTAssertEqual(overall.fractionCompleted, 0.41875, "cancelling keeps the work done")
        XCTAssertEqual(overall.completedUnitCount, 1)
        XCTAssertEqual(downloads.map(\.progress.isCancelled), [false, true, true, true],
                       "the finished photo was detached before the cancellation")
        XCTAssertNil(photos[0].error)
        for photo in photos.dropFirst() {
            XCTAssertEqual((photo.error as? CocoaError)?.code, .userCancelled)
            XCTAssertNil(photo.image)
            XCTAssertNil(photo.photoImport)
        }
    }

    @MainActor
    func test_ported_view_controller_observes_one_snapshot_on_the_main_queue() async throws {
        let photos = (1...2).map { Port.Photo(URL: URL(fileURLWithPath: "/Photos/IMG_000\($0).jpg"), size: 100) }
        let album = Port.Album(photos: photos)
        let screen = Port.PhotosScreen(overallProgress: album.importPhotos())
        screen.startObserving()
        defer { screen.stopObserving() }
        let downloads = photos.map { $0.photoImport!.download }

        downloads[0].deliver(100)  // photo 1 imported: 0.5
        try await waitUntil { screen.progressShown == 0.5 }
        XCTAssertEqual(screen.toolbar, ["Cancel", "Pause"])
        XCTAssertFalse(screen.isProgressHidden)

        screen.overallProgress.pause()
        try await waitUntil { screen.toolbar == ["Cancel", "Resume"] }

        screen.overallProgress.cancel()
        try await waitUntil { screen.toolbar == ["Reset"] }
        XCTAssertTrue(screen.isProgressHidden)
        XCTAssertEqual(screen.progressShown, 0.5)
    }

    /// Polls `condition` on the main actor, letting the main queue run in between, for up to 10 s.
    @MainActor
    private func waitUntil(
        _ condition: @MainActor () -> Bool, file: StaticString = #filePath, line: UInt = #line
    ) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                XCTFail("condition not met within 10 s", file: file, line: line)
                return
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    // MARK: The guide's other snippets

    func test_guide_migrating_advance() {
        let printed = PrintedLines()
        let print: @Sendable (Any) -> Void = { printed.append($0) }
        // BEGIN snippet: migrating-advance
        let files = ProgressNode(totalUnitCount: 1_000)
        DispatchQueue.concurrentPerform(iterations: 1_000) { _ in
            files.advance()                // not `files.completedUnitCount += 1`
        }
        print(files.completedUnitCount)    // 1000, always
        // END snippet: migrating-advance
        XCTAssertEqual(printed.lines, ["1000"])
        XCTAssertTrue(files.isFinished)
    }

    func test_guide_migrating_finishing_is_permanent() {
        let printed = PrintedLines()
        let print: @Sendable (Any) -> Void = { printed.append($0) }
        // BEGIN snippet: migrating-finishing-is-permanent
        let parent = ProgressNode(totalUnitCount: 2)
        let child = ProgressNode(totalUnitCount: 1, parent: parent, pendingUnitCount: 1)
        child.completedUnitCount = 1      // finished: credited
        child.completedUnitCount = 0      // Linux Foundation: parent 1 of 2 but fraction 0.0
        print(parent.fractionCompleted)   // 0.5
        // END snippet: migrating-finishing-is-permanent
        XCTAssertEqual(printed.lines, ["0.5"])
        XCTAssertEqual(parent.completedUnitCount, 1)
    }

    func test_guide_migrating_handlers() {
        let printed = PrintedLines()
        let print: @Sendable (Any) -> Void = { printed.append($0) }
        // BEGIN snippet: migrating-handlers
        let job = ProgressNode(totalUnitCount: 10)
        job.cancellationHandler = { print("stopping") }
        job.cancel()                      // prints "stopping" before it returns
        print(job.isCancelled)            // true
        // END snippet: migrating-handlers
        XCTAssertEqual(printed.lines, ["stopping", "true"])
    }

    func test_guide_migrating_with_current() async {
        let printed = PrintedLines()
        let print: @Sendable (Any) -> Void = { printed.append($0) }
        // BEGIN snippet: migrating-with-current
        func fetchThumbnails() async {
            let progress = ProgressNode(totalUnitCount: 3)  // attaches to the current node, as before
            for _ in 0..<3 {
                await Task.yield()
                progress.advance()
            }
        }

        let gallery = ProgressNode(totalUnitCount: 10)
        await gallery.withCurrent(pendingUnitCount: 10) {  // instead of becomeCurrent … resignCurrent
            print(ProgressNode.current() === gallery)      // true
            await fetchThumbnails()
        }
        print(gallery.isFinished)                           // true
        // END snippet: migrating-with-current
        XCTAssertEqual(printed.lines, ["true", "true"])
    }

    func test_guide_migrating_with_current_attaches_rather_than_crediting_at_the_end() async {
        // The snippet's `true` would also hold if the node did not attach (the scope would credit its
        // count at the end), so check that it did attach: mid-way, the gallery shows the partial work.
        let gallery = ProgressNode(totalUnitCount: 10)
        let midway = await gallery.withCurrent(pendingUnitCount: 10) { () async -> Double in
            let progress = ProgressNode(totalUnitCount: 4)
            progress.advance(by: 2)
            let fraction = gallery.fractionCompleted
            progress.advance(by: 2)
            return fraction
        }
        XCTAssertEqual(midway, 0.5)
        XCTAssertTrue(gallery.isFinished)
    }

    func test_guide_migrating_observe() async {
        let printed = PrintedLines()
        let print: @Sendable (Any) -> Void = { printed.append($0) }
        // BEGIN snippet: migrating-observe
        let download = ProgressNode.discreteProgress(totalUnitCount: 100)
        let ui = DispatchQueue(label: "ui")                  // or .main in an app
        let observation = download.observe(\.fractionCompleted, on: ui, options: .initial) { _, change in
            print(change.newValue)                           // no hop needed: already on `ui`
        }
        download.completedUnitCount = 100                    // the last value printed is 1.0
        await observation.waitForLastDelivery()              // a command-line tool waits for it
        // END snippet: migrating-observe
        XCTAssertEqual(printed.lines.last, "1.0")
        observation.invalidate()
        XCTAssertEqual(printed.lines.first, printed.lines.count == 1 ? "1.0" : "0.0")
    }

    // MARK: The migration table

    /// Every ProgressTree spelling in the guide's tables, used once, so that the tables cannot name
    /// something that does not exist. (Behaviour is checked by the snippets and the other test files.)
    func test_every_ProgressTree_name_in_the_migration_tables_exists() async throws {
        // Types
        let _: ProgressNode.Type = ProgressNode.self
        let _: (any ProgressTree.ProgressReporting)? = nil
        let kind: ProgressNode.Kind = .file
        let key: ProgressNode.UserInfoKey = .throughputKey
        let operation: ProgressNode.FileOperationKind = .copying
        XCTAssertEqual(kind, ProgressNode.Kind.file)
        XCTAssertEqual(key.rawValue, "NSProgressThroughputKey")
        XCTAssertEqual(operation.rawValue, "NSProgressFileOperationKindCopying")

        // Creating nodes
        XCTAssertNil(ProgressNode.current())
        let parent = ProgressNode(totalUnitCount: 10)
        let discrete = ProgressNode.discreteProgress(totalUnitCount: 5)
        let explicit = ProgressNode(totalUnitCount: 5, parent: parent, pendingUnitCount: 1)
        let plain = ProgressNode(parent: nil)
        let withInfo = ProgressNode(parent: nil, userInfo: [.fileTotalCountKey: 3])
        XCTAssertEqual(plain.totalUnitCount, 0)
        XCTAssertEqual(plain.completedUnitCount, 0)
        XCTAssertTrue(plain.isIndeterminate)
        XCTAssertEqual(withInfo.userInfo[.fileTotalCountKey] as? Int, 3)

        // Composition
        parent.addChild(discrete, withPendingUnitCount: 1)
        Self.becomeAndResign(parent)
        let answer: Int = await parent.withCurrent(pendingUnitCount: 1) { () async -> Int in 7 }
        XCTAssertEqual(answer, 7)
        XCTAssertEqual(parent.withCurrent(pendingUnitCount: 1) { 8 }, 8)
        XCTAssertTrue(parent.children.contains { $0 === explicit })
        let shared = parent.share(pendingUnitCount: 1).start(totalUnitCount: 2)
        XCTAssertTrue(parent.children.contains { $0 === shared })

        // Counts and state
        explicit.totalUnitCount = 4
        explicit.completedUnitCount = 1
        explicit.advance(by: 1)
        XCTAssertEqual(explicit.fractionCompleted, 0.5)
        XCTAssertFalse(explicit.isIndeterminate)
        XCTAssertFalse(explicit.isFinished)
        XCTAssertTrue(parent.description.hasPrefix("ProgressNode: "))
        XCTAssertEqual(parent.debugDescription, parent.description)

        // Descriptions
        explicit.localizedDescription = "Copying"
        explicit.localizedAdditionalDescription = "2 of 4"
        XCTAssertEqual(explicit.localizedDescription, "Copying")
        explicit.localizedDescription = nil
        XCTAssertEqual(explicit.localizedDescription, "50% completed")
        XCTAssertEqual(explicit.localizedAdditionalDescription, "2 of 4")

        // Cancelling and pausing
        XCTAssertTrue(explicit.isCancellable)
        XCTAssertFalse(explicit.isPausable)
        explicit.isCancellable = false
        explicit.isPausable = true
        explicit.cancellationHandler = {}
        explicit.pausingHandler = {}
        explicit.resumingHandler = {}
        explicit.pause()
        XCTAssertTrue(explicit.isPaused)
        explicit.resume()
        try explicit.checkCancellation()
        try await explicit.checkpoint()
        let linked = try await explicit.withCancellationLink { 1 }
        XCTAssertEqual(linked, 1)
        let unstructured = try await explicit.task(priority: nil) { 2 }.value
        XCTAssertEqual(unstructured, 2)
        explicit.cancel()
        XCTAssertTrue(explicit.isCancelled)

        // Metadata
        let file = ProgressNode.discreteProgress(totalUnitCount: 100)
        file.kind = .file
        file.setUserInfoObject(ProgressNode.FileOperationKind.downloading, forKey: .fileOperationKindKey)
        XCTAssertEqual(file.fileOperationKind, .downloading)
        file.fileOperationKind = .uploading
        file.fileOperationKind = .duplicating
        file.fileOperationKind = .decompressingAfterDownloading
        file.fileOperationKind = .receiving
        file.fileURL = URL(fileURLWithPath: "/tmp/a.jpg")
        file.estimatedTimeRemaining = 12
        file.throughput = 1_000
        file.fileTotalCount = 2
        file.fileCompletedCount = 1
        XCTAssertEqual(file.userInfo[.estimatedTimeRemainingKey] as? TimeInterval, 12)
        XCTAssertEqual(file.userInfo[.throughputKey] as? Int, 1_000)
        XCTAssertEqual(file.userInfo[.fileURLKey] as? URL, URL(fileURLWithPath: "/tmp/a.jpg"))
        XCTAssertEqual(file.userInfo[.fileTotalCountKey] as? Int, 2)
        XCTAssertEqual(file.userInfo[.fileCompletedCountKey] as? Int, 1)
        file.setUserInfoObject(nil, forKey: .fileCompletedCountKey)
        XCTAssertNil(file.userInfo[.fileCompletedCountKey])
        XCTAssertEqual(ProgressNode.UserInfoKey("MyIconKey").rawValue, "MyIconKey")
        _ = file.fileSummary
        XCTAssertNil(file.estimationClock)

        // Observation
        let observation = file.observe(\.fractionCompleted, on: DispatchQueue(label: "table"), options: .initial) { _, _ in }
        observation.invalidate()
        _ = ProgressNode.ObservationOptions.initial
        XCTAssertEqual(file.snapshot.completedUnitCount, 0)
        let _: ProgressNode.Snapshots = file.snapshots
    }

    /// The thread-local members, which are unavailable in `async` code.
    private static func becomeAndResign(_ parent: ProgressNode) {
        parent.becomeCurrent(withPendingUnitCount: 1)
        parent.resignCurrent()
        let result: Int = parent.performAsCurrent(withPendingUnitCount: 1) { 42 }
        XCTAssertEqual(result, 42)
    }

    func test_current_and_init_parent_work_in_async_code() async {
        // "`ProgressNode.current()` and `init(parent:userInfo:)` work in `async` code."
        let album = ProgressNode(totalUnitCount: 2)
        let photo = await album.withCurrent(pendingUnitCount: 2) { () async -> ProgressNode in
            await Task.yield()
            XCTAssertTrue(ProgressNode.current() === album)
            return ProgressNode(parent: album)
        }
        photo.totalUnitCount = 4
        photo.advance()
        XCTAssertEqual(album.fractionCompleted, 0.25)
    }

    func test_the_migration_guide_table_of_zero_totals() {
        // Docs/Migrating.md, "0 of 0 is indeterminate".
        func node(_ completed: Int64, _ total: Int64) -> ProgressNode {
            let node = ProgressNode.discreteProgress(totalUnitCount: total)
            node.completedUnitCount = completed
            return node
        }
        for (completed, total) in [(-1, -1), (0, -1), (1, -1), (-1, 0), (-1, 1)] as [(Int64, Int64)] {
            XCTAssertTrue(node(completed, total).isIndeterminate)
            XCTAssertEqual(node(completed, total).fractionCompleted, 0)
        }
        XCTAssertTrue(node(0, 0).isIndeterminate)
        XCTAssertEqual(node(0, 0).fractionCompleted, 0)
        XCTAssertFalse(node(0, 0).isFinished)
        XCTAssertFalse(node(1, 0).isIndeterminate)
        XCTAssertEqual(node(1, 0).fractionCompleted, 1)
        XCTAssertTrue(node(1, 0).isFinished, "an empty job finishes by counting one unit")
        XCTAssertEqual(node(0, 1).fractionCompleted, 0)
        XCTAssertEqual(node(1, 1).fractionCompleted, 1)
    }

    func test_the_migration_guide_statements_about_current_and_nesting() {
        // `becomeCurrent` nests, also for the node that is already current.
        let node = ProgressNode(totalUnitCount: 10)
        node.becomeCurrent(withPendingUnitCount: 2)
        node.becomeCurrent(withPendingUnitCount: 3)
        let child = ProgressNode(totalUnitCount: 1)  // claims the inner scope's 3
        node.resignCurrent()
        node.resignCurrent()  // the outer scope's 2 are credited: nothing attached in it
        XCTAssertEqual(node.completedUnitCount, 2)
        child.advance()
        XCTAssertEqual(node.completedUnitCount, 5)

        // A node made current by `withCurrent` is a valid parent for `init(parent:userInfo:)`.
        let album = ProgressNode(totalUnitCount: 4)
        let photo = album.withCurrent(pendingUnitCount: 4) { ProgressNode(parent: album) }
        photo.totalUnitCount = 2
        photo.advance()
        XCTAssertEqual(album.fractionCompleted, 0.5)
    }
}
