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
/// Each task is adopted as a child of the root (`addChild(_:withPendingUnitCount:failsOnHTTPStatus:)`):
/// the node that follows it is labelled "Downloading “name”…" (kind `.file`, with the destination's URL)
/// and shows its bytes of the Content-Length; it finishes when the task completes, fails with the task's
/// error (a refused connection) or its HTTP status (400 and above), and cancelling the root cancels the
/// task, which closes the connection. A download that fails here (another status than 2xx below 400, a
/// file that exists) has its node failed by fetch with the reason.
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
            let node = root.addChild(task, withPendingUnitCount: 1, failsOnHTTPStatus: true)
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

    /// Waits for every download started to end, and for its node to show how: the node of a task ends
    /// once the task is completed, which swift-corelibs-foundation marks only after the delegate's last
    /// call has returned. (Failing the root before would cancel a node not yet seen finished.)
    func wait() async {
        await withCheckedContinuation { continuation in
            finished.notify(queue: .global()) { continuation.resume() }
        }
        for node in downloads.withLock({ $0.values.map(\.node) }) {
            for await _ in node.snapshots {}
        }
        // Returns after the sample that ended the last node has credited the root too.
        ProgressNode.sampleAdoptedFoundationProgress()
    }

    /// How the downloads started ended, in the order they were added.
    var outcomes: [Outcome] {
        downloads.withLock { $0.sorted { $0.key < $1.key }.compactMap(\.value.outcome) }
    }

    // MARK: URLSessionDownloadDelegate

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        let id = downloadTask.taskIdentifier
        guard let destination = downloads.withLock({ $0[id]?.destination }) else { return }
        let outcome: Outcome
        if let response = downloadTask.response as? HTTPURLResponse, !(200..<300).contains(response.statusCode) {
            outcome = .failed(HTTPStatusError(statusCode: response.statusCode).description)
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
        guard let download else { return }  // a task never started (its file exists), cancelled with its node
        // The task's own outcomes (its error, an HTTP status of 400 and above) reach its node through the
        // adoption; fetch fails the node for its own.
        let status = (task.response as? HTTPURLResponse)?.statusCode ?? 200
        if error == nil, case .failed(let reason)? = download.outcome, status < 400 {
            download.node.fail(Failure(description: reason))
        }
        finished.leave()
    }

    /// Why a download failed, as its node shows it.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }
}
