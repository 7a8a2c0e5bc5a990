// Scenario 18: a terminal renderer on a wide root, in each mode. Public API only (so it measures any
// checkout, `PROGRESSTREE_ROOT`), every result checked.
//
// 18. A root copying `children` files (`.file` children of 1 MB, named "/data/file-<i>"), all attached before
//     the renderer starts, copied in order four at a time: at each frame each of the four files in flight
//     advances by 250,000 bytes, so each takes four frames and one finishes a frame. The renderer draws by
//     hand (`drawsOnTimer = false`) with a clock that moves 1/15 s a frame (the default rate), into an
//     output that counts what it is given and keeps nothing, 100 × 30 cells, not a terminal (a pipe).
//     Timed: building the tree (per file: create, `kind`, `fileURL`, the URLs made beforehand); `start()`,
//     then the first frame, on a root nobody read before (so the first frame pays the
//     model's first read of the root: since the files' `kind` setters computed them in the root's kept
//     summary, it costs what a later read does; it used to compute every file), each later frame (median
//     and worst), then `stop()` while the root still runs. A second run times the root's first description
//     read alone, before its renderer starts, does the same frames, then finishes every remaining file at
//     once (they finish unseen, between two frames), draws one frame and stops: timed, that frame and
//     `stop()`.
//     Lines are counted in both runs, whole ("\n" written).

import Foundation
import ProgressTree
import ProgressTreeTerminal
import Synchronization

/// An output that counts lines and bytes and keeps nothing (a pipe whose reader discards).
final class CountingOutput: TerminalOutput {
    private let counts = Mutex((lines: 0, bytes: 0))
    var lines: Int { counts.withLock { $0.lines } }
    func write(_ text: String) {
        var newlines = 0
        for byte in text.utf8 where byte == 10 { newlines += 1 }
        counts.withLock {
            $0.lines += newlines
            $0.bytes += text.utf8.count
        }
    }
    var isTerminal: Bool { false }
    func size() -> TerminalSize? { TerminalSize(columns: 100, rows: 30) }
    var fileDescriptor: Int32? { nil }
}

/// A clock moved by hand, 1/15 s a frame.
final class FrameClock: ProgressClock {
    private let time = Mutex(Duration.zero)
    var now: Duration { time.withLock { $0 } }
    func advance(_ duration: Duration) { time.withLock { $0 += duration } }
}

/// What one run of scenario 18 measured, in seconds and lines.
public struct WideTerminalResult: Sendable {
    /// The first read of the root's additional description, alone (second run, before its renderer starts):
    /// O(1) since the files' setters pay for their contributions; it was O(children).
    public var firstRead: Double
    /// Creating one file child, giving it its kind and its URL (made beforehand): what the program that
    /// builds the tree pays, the kept summary's share included.
    public var buildPerChild: Double
    /// `start()` (json mode writes the first lines there), then the first frame, on a root nobody read.
    public var start: Double
    public var firstFrame: Double
    /// Each later frame of the copy: wall clock, and this thread's CPU time (without the time other
    /// processes took the core: the machine is shared).
    public var frames: [Double]
    public var frameCPU: [Double]
    /// `stop()` while the root runs (first run); the frame after every file finished unseen and `stop()`
    /// (second run).
    public var stopRunning: Double
    public var burstFrame: Double
    public var stopFinished: Double
    /// Lines written in the first run and in the second.
    public var linesRunning: Int
    public var linesFinished: Int
}

/// 18. One mode (`live`, `plain` or `json`) over a root of `children` files, `frames` frames of copying.
@inline(never)
public func wideTerminal(mode: TerminalRenderer.Mode, children: Int, frames: Int) -> WideTerminalResult {
    var result = WideTerminalResult(
        firstRead: 0, buildPerChild: 0, start: 0, firstFrame: 0, frames: [], frameCPU: [], stopRunning: 0,
        burstFrame: 0, stopFinished: 0,
        linesRunning: 0, linesFinished: 0)
    for finishesAll in [false, true] {
        let fileSize: Int64 = 1_000_000
        let root = ProgressNode.discreteProgress(totalUnitCount: Int64(children))
        let clock = FrameClock()
        root.estimationClock = clock
        root.fileOperationKind = .copying
        let urls = (0..<children).map { URL(fileURLWithPath: "/data/file-\($0)") }
        var files: [ProgressNode] = []
        files.reserveCapacity(children)
        let build = timed {
            for url in urls {
                let file = ProgressNode(totalUnitCount: fileSize, parent: root, pendingUnitCount: 1)
                file.kind = .file
                file.fileURL = url
                files.append(file)
            }
        }
        if !finishesAll { result.buildPerChild = build / Double(max(children, 1)) }
        if finishesAll { result.firstRead = timed { _ = root.localizedAdditionalDescription } }
        var options = TerminalRenderer.Options()
        options.drawsOnTimer = false
        options.initialDelay = .zero
        options.showsTaskbarProgress = false
        options.colors = false
        let output = CountingOutput()
        let renderer = TerminalRenderer(
            root, mode: mode, options: options, output: output, clock: clock, environment: [:])
        let frame = Duration.nanoseconds(1_000_000_000 / 15)
        let start = timed { renderer.start() }
        let firstFrame = timed { renderer.drawFrame() }
        if !finishesAll {
            result.start = start
            result.firstFrame = firstFrame
        }
        var inFlight = Array(0..<min(4, children))
        var next = inFlight.count
        var times: [Double] = []
        var cpuTimes: [Double] = []
        for _ in 0..<frames {
            for (slot, index) in inFlight.enumerated() {
                files[index].advance(by: 250_000)
                if files[index].isFinished, next < children {
                    inFlight[slot] = next
                    next += 1
                }
            }
            clock.advance(frame)
            let cpuBefore = threadCPUSeconds()
            times.append(timed { renderer.drawFrame() })
            cpuTimes.append(threadCPUSeconds() - cpuBefore)
        }
        if finishesAll {
            for file in files where !file.isFinished { file.completedUnitCount = fileSize }
            expect(root.isFinished, "wide terminal: the root finished")
            clock.advance(frame)
            result.burstFrame = timed { renderer.drawFrame() }
            result.stopFinished = timed { renderer.stop() }
            result.linesFinished = output.lines
        } else {
            expect(!root.isFinished, "wide terminal: the root runs")
            result.frames = times
            result.frameCPU = cpuTimes
            result.stopRunning = timed { renderer.stop() }
            result.linesRunning = output.lines
        }
        expect(output.lines > 0, "wide terminal: something was written")
    }
    return result
}

/// This thread's CPU time, in seconds.
func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
}
