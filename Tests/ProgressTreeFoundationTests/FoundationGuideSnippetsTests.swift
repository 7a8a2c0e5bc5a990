// swift-format-ignore-file
// (The guides show this file's snippets verbatim, their end-of-line comments aligned by hand.)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ProgressTree
import ProgressTreeFoundation
import Synchronization
import TestSupport
import XCTest
import ProgressTreePlatform

// The snippets of Docs/GettingStarted.md ("Progress from framework APIs") and Docs/Migrating.md
// ("Progress from Foundation APIs", "Handing a node to code that wants Progress"), as tests.
// `GuideSnippetsTests.test_guide_snippets_match_the_guides` (in ProgressTreeTests) checks that the guides
// show the regions between `// BEGIN snippet:` and `// END snippet:` verbatim. `print` is shadowed by a
// closure that records the lines.

/// Docs/Properties.md's count of skipped photos.
private enum PhotosSkipped: ProgressProperty {
    static var defaultValue: Int { 0 }
    static var defaultSummary: Int { 0 }
    static func reduce(into summary: inout Int, value: Int) { summary += value }
    static func merge(_ a: Int, _ b: Int) -> Int { a + b }
}

final class FoundationGuideSnippetsTests: XCTestCase {
    /// Docs/Properties.md: a property's summary put in a Foundation `userInfo` by hand, under a key of the
    /// program's own; the node's metadata is not touched.
    func test_guide_properties_foundation() {
        let album = ProgressNode(totalUnitCount: 2)
        let photo = ProgressNode(totalUnitCount: 1, parent: album, pendingUnitCount: 1)
        photo[PhotosSkipped.self] = 3
        // BEGIN snippet: properties-foundation
        let progress = album.foundationProgress  // the same object for as long as it is held
        let key = Foundation.ProgressUserInfoKey("com.example.photosSkipped")
        progress.setUserInfoObject(album.summary(of: PhotosSkipped.self), forKey: key)  // again when it changes
        // END snippet: properties-foundation
        XCTAssertEqual(progress.userInfo[key] as? Int, 3)
        XCTAssertNil(album.fileCompletedCount)
    }

    func test_guide_getting_started_urlsession() async throws {
        let server = try TestHTTPServer(files: ["photo.jpg": Data(repeating: 7, count: 300_000)])
        defer { server.stop() }
        let photoURL = URL(string: server.url("photo.jpg"))!
        let printed = SnippetLines()
        let print: @Sendable (Any) -> Void = { printed.append($0) }
        // BEGIN snippet: getting-started-urlsession
        let downloads = ProgressNode(totalUnitCount: 1)
        let task = URLSession.shared.downloadTask(with: photoURL) { location, response, error in
            // move the file at `location` where it belongs, before returning
        }
        let download = downloads.addChild(task, withPendingUnitCount: 1)  // follows the task's bytes
        download.kind = .file                                // the node it returns is yours to label
        download.fileOperationKind = .downloading
        download.fileURL = URL(fileURLWithPath: "photo.jpg")
        print(download.localizedDescription!)                // Downloading “photo.jpg”…
        task.resume()
        for await _ in downloads.snapshots {}                // until the tree ends, with the task
        print(downloads.isFinished)                          // true
        // END snippet: getting-started-urlsession
        XCTAssertEqual(printed.lines, ["Downloading “photo.jpg”…", "true"])
        XCTAssertEqual(download.completedUnitCount, 300_000, "the length the server gave")
        XCTAssertEqual(task.error == nil, true)
    }

    func test_guide_migrating_adopt_progress() {
        let printed = SnippetLines()
        let print: @Sendable (Any) -> Void = { printed.append($0) }
        // BEGIN snippet: migrating-adopt-progress
        let job = ProgressNode(totalUnitCount: 10)
        let progress = Progress.discreteProgress(totalUnitCount: 4)  // handed out by a framework API
        job.addChild(progress, withPendingUnitCount: 10)
        progress.completedUnitCount = 1                 // by the framework, on its own queue
        ProgressNode.sampleAdoptedFoundationProgress()  // shown at once (otherwise within 50 ms on Linux)
        print(job.fractionCompleted)                    // 0.25
        job.cancel()
        print(progress.isCancelled)                     // true: the cancellation reached it
        // END snippet: migrating-adopt-progress
        XCTAssertEqual(printed.lines, ["0.25", "true"])
    }

    func test_guide_migrating_implicit_foundation_children() {
        let printed = SnippetLines()
        let print: @Sendable (Any) -> Void = { printed.append($0) }
        ImplicitScope.forgetCompanionChoice()  // as in a program that never set it
        // BEGIN snippet: migrating-implicit-foundation-children
        /// A library function written for Foundation: its progress attaches to the current one.
        func compress(_ files: [String]) {
            let progress = Progress(totalUnitCount: Int64(files.count))
            for _ in files { progress.completedUnitCount += 1 }
        }

        let backup = ProgressNode(totalUnitCount: 10)
        backup.performAsCurrent(withPendingUnitCount: 10) {
            compress(["a", "b", "c"])
        }
        print(backup.completedUnitCount)  // 10: the Progress attached, finished and was credited
        // END snippet: migrating-implicit-foundation-children
        XCTAssertEqual(printed.lines, ["10"])
    }

    func test_guide_migrating_foundation_progress() {
        let printed = SnippetLines()
        let print: @Sendable (Any) -> Void = { printed.append($0) }
        // BEGIN snippet: migrating-foundation-progress
        /// A type that an API wants as `Foundation.ProgressReporting`, whose work is a node.
        final class Export: NSObject, Foundation.ProgressReporting {
            let node = ProgressNode.discreteProgress(totalUnitCount: 100)
            var progress: Progress { node.foundationProgress }  // the same object while someone holds it
        }

        let export = Export()
        let apiTree = Progress.discreteProgress(totalUnitCount: 1)  // the API's own Foundation tree
        apiTree.addChild(export.progress, withPendingUnitCount: 1)
        export.node.advance(by: 50)
        print(export.progress.completedUnitCount)  // 50
        export.progress.cancel()                    // the API cancels: the node is cancelled
        print(export.node.isCancelled)              // true
        // END snippet: migrating-foundation-progress
        XCTAssertEqual(printed.lines, ["50", "true"])
    }
}

/// The lines a snippet printed.
private final class SnippetLines: Sendable {
    private let storage = Lock<[String]>([])
    func append(_ item: Any) {
        let line = "\(item)"
        storage.withLock { $0.append(line) }
    }
    var lines: [String] { storage.withLock { $0 } }
}

