import Foundation
import ProgressTree
import ProgressTreeFoundation
import Synchronization

// Wherever Foundation is swift-corelibs-foundation (every platform but Apple's), URLSession is in
// FoundationNetworking.
#if !(os(macOS) || os(iOS) || os(tvOS) || os(watchOS) || os(visionOS))
import FoundationNetworking
#endif

/// The downloads, one `URLSessionDownloadTask` each, and their session's delegate.
///
/// Each task's own `progress` is adopted as a child of the root (`addChild(_:withPendingUnitCount:)`):
/// the node that mirrors it is labelled "Downloading “name”…" (kind `.file`, with the destination's URL)
/// and shows its bytes; cancelling the root cancels the task through its progress, which closes the
/// connection. A download that fails (an HTTP status other than 2xx, a refused connection, a file that
/// exists) has its node failed with the reason.
final class Downloader: NSObject, URLSessionDownloadDelegate, Sendable {
    /// How one download ended.
    enum Outcome: Sendable, Equatable {
        case saved(bytes: Int64)
        case failed(String)
        case cancelled
    }

    private struct Download: Sendable {
        let destination: URL
        let node: ProgressNode
        var outcome: Outcome?
    }

    private let downloads = Mutex<[Int: Download]>([:])
    private let tasks = Mutex<[URLSessionDownloadTask]>([])
    private let session = Mutex<URLSession?>(nil)
    private let finished = DispatchGroup()

    /// Makes a download task for each of `urls` into `folder`, a child of `root` worth one unit each (not
    /// started: see `resume()`); a destination that exists fails at once. Its outcomes so far.
    func add(_ urls: [URL], into folder: URL, under root: ProgressNode) -> [Outcome?] {
        let session = URLSession(configuration: .ephemeral, delegate: self, delegateQueue: nil)
        self.session.withLock { $0 = session }
        var immediate: [Outcome?] = []
        for url in urls {
            let destination = folder.appendingPathComponent(Options.fileName(of: url))
            let task = session.downloadTask(with: url)
            let node = root.addChild(task.progress, withPendingUnitCount: 1)
            node.kind = .file
            node.fileOperationKind = .downloading
            node.fileURL = destination
            if FileManager.default.fileExists(atPath: destination.path) {
                let reason = "\(destination.path) already exists"
                node.fail(Failure(description: reason))
                immediate.append(.failed(reason))
                continue
            }
            immediate.append(nil)
            downloads.withLock { $0[task.taskIdentifier] = Download(destination: destination, node: node) }
            tasks.withLock { $0.append(task) }
            finished.enter()
        }
        return immediate
    }

    /// Starts the downloads added; the session ends once they are done.
    func resume() {
        let tasks = tasks.withLock { $0 }
        for task in tasks { task.resume() }
        session.withLock { $0 }?.finishTasksAndInvalidate()
    }

    /// Waits for every download started to end.
    func wait() async {
        await withCheckedContinuation { continuation in
            finished.notify(queue: .global()) { continuation.resume() }
        }
    }

    /// How the downloads started ended, in the order they were added.
    var outcomes: [Outcome] {
        downloads.withLock { $0.sorted { $0.key < $1.key }.compactMap(\.value.outcome) }
    }

    // MARK: URLSessionDownloadDelegate

    func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64
    ) {
        #if !(os(macOS) || os(iOS) || os(tvOS) || os(watchOS) || os(visionOS))
        // swift-corelibs-foundation computes the task progress's total from the size the client expects
        // (not from the response's Content-Length), so without this it stays indeterminate.
        if downloadTask.countOfBytesClientExpectsToReceive <= 0 && totalBytesExpectedToWrite > 0 {
            downloadTask.countOfBytesClientExpectsToReceive = totalBytesExpectedToWrite
        }
        #endif
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        let id = downloadTask.taskIdentifier
        guard let destination = downloads.withLock({ $0[id]?.destination }) else { return }
        let outcome: Outcome
        if let response = downloadTask.response as? HTTPURLResponse, !(200..<300).contains(response.statusCode) {
            outcome = .failed(
                "HTTP \(response.statusCode) (\(HTTPURLResponse.localizedString(forStatusCode: response.statusCode)))")
            // The error page is not kept. swift-corelibs-foundation leaves the file in the temporary folder
            // after this method returns (Apple's URLSession removes it); removing it is right on both.
            try? FileManager.default.removeItem(at: location)
        } else {
            let bytes = (try? FileManager.default.attributesOfItem(atPath: location.path)[.size] as? Int64) ?? nil
            do {
                try SavedFile.place(location, at: destination)
                outcome = .saved(bytes: bytes ?? 0)
            } catch {
                outcome = .failed("\(error)")
                try? FileManager.default.removeItem(at: location)  // not placed: not left behind either
            }
        }
        downloads.withLock { $0[id]?.outcome = outcome }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let id = task.taskIdentifier
        let download = downloads.withLock { downloads -> Download? in
            if let error, downloads[id]?.outcome == nil {
                downloads[id]?.outcome =
                    (error as? URLError)?.code == .cancelled ? .cancelled : .failed(error.localizedDescription)
            }
            return downloads[id]
        }
        if let download {
            switch download.outcome {
            case .saved(let saved)?:
                // The transfer is over: no other writer of its progress is left. swift-corelibs-foundation
                // may leave it short of finished (a response without a Content-Length, or one that arrived
                // before the expected size took effect); finish it at the size saved.
                let progress = task.progress
                if !progress.isFinished {
                    let bytes = max(saved, progress.completedUnitCount, 1)
                    progress.totalUnitCount = bytes
                    progress.completedUnitCount = bytes
                }
                // Seen finished now, before `main` may fail the root (which cancels unfinished children).
                ProgressNode.sampleAdoptedFoundationProgress()
            case .failed(let reason)?: download.node.fail(Failure(description: reason))
            case .cancelled?, nil: break
            }
        }
        finished.leave()
    }

    /// Why a download failed, as its node shows it.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }
}
