import Foundation
import ProgressTree
@testable import ProgressTreeTerminal
import TestSupport
import XCTest

/// What a person sees over a whole run, read from the screen after each frame's bytes are applied
/// (Docs/Terminal.md, "Steady columns", "Narrow terminals", "Words say what happened"): an album imported
/// as photo-import does it (each photo a download of bytes and a filter), throughput and time remaining
/// appearing after the first frames, one photo failing half way, the final frame, at 40, 60, 80 and 120
/// columns.
final class SteadyColumnsTests: XCTestCase {
    static let widths = [40, 60, 80, 120]

    /// One run, drawn by a renderer per width on the same tree; `frames[width]` holds every frame's screen.
    private struct Run {
        var frames: [Int: [[String]]] = [:]
    }

    /// Six photos, three at a time; the fourth photo's download fails half way (as `--fail-every 4`).
    /// Each step advances the clock by 100 ms, so estimates appear after the first frames.
    private func importAlbum(rows: Int = 30) -> Run {
        let clock = ManualProgressClock()
        let album = ProgressNode.discreteProgress(totalUnitCount: 6)
        album.localizedDescription = "Importing 6 photos"
        album.estimationClock = clock
        let terminals = Self.widths.map { VirtualTerminal(columns: $0, rows: rows) }
        let renderers = terminals.map { makeTestRenderer(album, output: $0, clock: clock) }
        var run = Run()
        func frame(final: Bool = false) {
            for (terminal, renderer) in zip(terminals, renderers) {
                if final { renderer.stop() } else { renderer.drawFrame() }
                run.frames[terminal.columns, default: []].append(terminal.visibleLines)
            }
        }
        var photos: [(photo: ProgressNode, download: ProgressNode, index: Int)] = []
        func start(_ index: Int) {
            let photo = makeChild("IMG_000\(index + 1).jpg", total: 10, parent: album)
            photo.localizedAdditionalDescription = ""
            let download = ProgressNode(
                totalUnitCount: 2_000_000 + Int64(index) * 700_000, parent: photo, pendingUnitCount: 9)
            download.kind = .file
            download.fileOperationKind = .downloading
            download.fileURL = URL(fileURLWithPath: "/Volumes/Camera/DCIM/IMG_000\(index + 1).jpg")
            photos.append((photo, download, index))
        }
        for index in 0..<3 { start(index) }
        var next = 3
        frame()
        while !photos.isEmpty {
            clock.advance(by: .milliseconds(100))
            for (photo, download, index) in photos {
                if download.isFinished {
                    photo.completedUnitCount = 10
                } else {
                    download.advance(by: min(250_000, download.totalUnitCount - download.completedUnitCount))
                    if index == 3, download.fractionCompleted >= 0.5 {
                        photo.fail(Reason(description: "IMG_0004.jpg: the camera stopped answering"))
                    }
                }
            }
            photos.removeAll { $0.photo.isFinished || $0.photo.isFailed }
            while photos.count < 3, next < 6 {
                start(next)
                next += 1
            }
            frame()
        }
        album.fail(Reason(description: "1 of 6 photos failed"))
        frame(final: true)
        return run
    }

    /// The first column and the width of the bar of `line`, if it shows one.
    private func bar(of line: String) -> (start: Int, width: Int)? {
        let cells = Array(line)
        guard let start = cells.firstIndex(where: { "█░▏▎▍▌▋▊▉".contains($0) }) else { return nil }
        let end = cells[start...].firstIndex(where: { !"█░▏▎▍▌▋▊▉".contains($0) }) ?? cells.count
        return (VirtualTerminal.displayWidth(String(cells[..<start])), end - start)
    }

    func test_every_bar_starts_at_the_same_column_with_the_same_width_from_the_first_frame_to_the_final_one() {
        let run = importAlbum()
        for width in Self.widths {
            let frames = run.frames[width]!
            var bars: Set<String> = []
            for (number, screen) in frames.enumerated() {
                for line in screen {
                    if let bar = bar(of: line) { bars.insert("\(bar.start)+\(bar.width)") }
                    XCTAssertLessThan(VirtualTerminal.displayWidth(line), width, "\(width), frame \(number): \(line)")
                }
            }
            XCTAssertEqual(bars.count, 1, "\(width) columns: bars at \(bars.sorted())")
        }
    }

    /// Throughput and time remaining appear after the first frames: they had their room from the first
    /// frame on, so the percentage and the counts stay where they were.
    func test_estimates_appear_in_room_kept_for_them_from_the_first_frame() {
        let run = importAlbum()
        for width in [80, 120] {
            let frames = run.frames[width]!
            let root = frames.map { $0[0] }
            XCTAssertFalse(root[0].contains("/s"), "no estimate at first: \(root[0])")
            XCTAssertTrue(root.contains { $0.hasSuffix("s") && $0.contains("/s") }, "estimates appear at \(width)")
            let percentColumns = Set(
                root.compactMap { line in
                    line.firstRange(of: "%").map { line.distance(from: line.startIndex, to: $0.lowerBound) }
                })
            XCTAssertEqual(percentColumns.count, 1, "\(width): \(root)")
        }
    }

    /// A failed line gives its own bar, percentage and counts to its reason when the reason does not fit
    /// its label column; the other lines keep their bars.
    func test_a_failure_shows_its_reason_on_its_own_line_and_changes_no_other_line() {
        let run = importAlbum()
        let expected = [
            40: "  ! IMG_0004.jpg — failed: the camera …",
            60: "  ! IMG_0004.jpg — failed: the camera stopped answering",
            80: "  ! IMG_0004.jpg — failed: the camera stopped answering",
            120: "  ! IMG_0004.jpg — failed: the camera stopped answering",
        ]
        for width in Self.widths {
            let frames = run.frames[width]!
            let first = frames.firstIndex { $0.contains { $0.contains("! IMG_0004.jpg") } }!
            for screen in frames[first...].dropLast() {
                XCTAssertEqual(screen.filter { $0.contains("IMG_0004.jpg") }, [expected[width]!], "\(width): \(screen)")
            }
        }
    }

    /// At every width a label keeps at least 16 columns of text (`minimumLabelWidth`), or all of it: a
    /// download's line keeps its file's name, the words before it go first.
    func test_narrow_terminals_keep_the_names_readable_before_the_bar() {
        let run = importAlbum()
        for width in Self.widths {
            let downloads = run.frames[width]!.flatMap { $0 }.filter { $0.contains("“IMG_000") }
            XCTAssertFalse(downloads.isEmpty)
            for line in downloads {
                XCTAssertTrue(line.contains(/“IMG_000[1-6]\.jpg”/), "\(width): \(line)")
            }
        }
        XCTAssertEqual(
            run.frames[40]![0],
            [
                "• Importing 6 photos   ░░░░░░░░░░░   0%",
                "  • IMG_0001.jpg       ░░░░░░░░░░░   0%",
                "    • “IMG_0001.jpg”…  ░░░░░░░░░░░   0%",
                "  • IMG_0002.jpg       ░░░░░░░░░░░   0%",
                "    • “IMG_0002.jpg”…  ░░░░░░░░░░░   0%",
                "  • IMG_0003.jpg       ░░░░░░░░░░░   0%",
                "    • “IMG_0003.jpg”…  ░░░░░░░░░░░   0%",
            ])
    }

    /// The final frame counts what happened to the photos: one failed; the download its failure
    /// cancelled is part of that failure, not a cancellation (the summary used to say "1 failed,
    /// 1 cancelled"). The final frame has no ellipsis on lines whose work ended.
    func test_the_final_frame_counts_failures_not_the_nodes_a_failure_cancelled() {
        let run = importAlbum()
        for width in Self.widths {
            let final = run.frames[width]!.last!
            XCTAssertTrue(final.contains { $0.hasPrefix("! 1 failed: IMG_0004.jpg") }, "\(width): \(final)")
            XCTAssertFalse(final.joined().contains("cancelled"), "\(width): \(final)")
            XCTAssertFalse(final.contains { $0.contains("”…") }, "\(width): \(final)")
        }
        XCTAssertEqual(
            run.frames[120]!.last!,
            [
                "! Importing 6 photos — failed: 1 of 6 photos failed",
                "  ! IMG_0004.jpg — failed: the camera stopped answering",
                "  ✓ IMG_0005.jpg                                 ██████████████████████████████ 100%",
                "  ✓ IMG_0006.jpg                                 ██████████████████████████████ 100%",
                "! 1 failed: IMG_0004.jpg: the camera stopped answering",
            ])
    }

    /// In a terminal shorter than the tree, the failed photo's line stays in sight while running lines
    /// give way to "+N more".
    func test_a_failed_line_stays_in_sight_while_running_lines_give_way() {
        let run = importAlbum(rows: 6)
        for width in Self.widths {
            let failedFrames = run.frames[width]!.dropLast().filter { $0.contains { $0.contains("! IMG_0004.jpg") } }
            let afterFailure = run.frames[width]!.dropLast().drop { !$0.contains { $0.contains("! IMG_0004.jpg") } }
            XCTAssertFalse(failedFrames.isEmpty, "\(width)")
            XCTAssertEqual(failedFrames.count, afterFailure.count, "\(width): the failed line never gives way")
        }
    }

    /// A tree that deepens after the first frame, as photo-import's with workers: the first frame shows
    /// the workers' lines alone ("worker 1", before its stream says more), then each worker's photos and
    /// downloads come three levels down. Their names stay readable: the plan is made anew once, when the
    /// first line comes whose label would not be readable in it, and kept from then to the final frame.
    func test_lines_deeper_than_any_before_keep_their_names_readable_and_the_bars_move_once() {
        for width in Self.widths {
            let album = ProgressNode.discreteProgress(totalUnitCount: 6)
            album.localizedDescription = "Importing 6 photos"
            let terminal = VirtualTerminal(columns: width, rows: 30)
            let renderer = makeTestRenderer(album, output: terminal)
            var frames: [[String]] = []
            let workers = (1...2).map { makeChild("worker \($0)", total: 3, parent: album, pending: 3) }
            renderer.drawFrame()
            frames.append(terminal.visibleLines)
            var downloads: [(photo: ProgressNode, download: ProgressNode)] = []
            for (index, worker) in workers.enumerated() {
                worker.localizedDescription = "worker \(index + 1): Importing 3 photos"
                for photo in 0..<3 {
                    let number = photo * 2 + index + 1
                    let node = makeChild("IMG_000\(number).jpg", total: 10, parent: worker)
                    node.localizedAdditionalDescription = ""
                    let download = ProgressNode(totalUnitCount: 1_000_000, parent: node, pendingUnitCount: 9)
                    download.kind = .file
                    download.fileOperationKind = .downloading
                    download.fileURL = URL(fileURLWithPath: "/Volumes/Camera/DCIM/IMG_000\(number).jpg")
                    downloads.append((node, download))
                }
            }
            let deepFrom = frames.count
            for _ in 0..<4 {
                for (_, download) in downloads { download.advance(by: 250_000) }
                renderer.drawFrame()
                frames.append(terminal.visibleLines)
            }
            for (photo, _) in downloads { photo.completedUnitCount = 10 }
            renderer.stop()
            frames.append(terminal.visibleLines)

            for line in frames[deepFrom...].joined() where line.contains("“IMG_000") {
                XCTAssertTrue(line.contains(/“IMG_000[1-6]\.jpg”/), "\(width): \(line)")
            }
            for line in frames[deepFrom...].joined() where line.contains("worker ") {
                XCTAssertTrue(line.contains(/worker [12]: Importin/), "\(width): \(line)")
            }
            let bars = Set(frames[deepFrom...].joined().compactMap { bar(of: $0).map { "\($0.start)+\($0.width)" } })
            XCTAssertLessThanOrEqual(bars.count, 1, "\(width) columns: bars at \(bars.sorted())")
        }
    }

    /// Five downloads as fetch shows them (two answer 404 after the first frames): the root's line had room
    /// planned for the note it comes to show, so "Downloading 5 files · 2 failed" stays whole at 100 and
    /// 120 columns (it was cut to "Downloading 5 f… · 2 failed" at 100), and no bar moves.
    func test_a_failure_note_below_never_cuts_a_label_planned_whole() {
        for width in [100, 120] {
            let clock = ManualProgressClock()
            let root = ProgressNode.discreteProgress(totalUnitCount: 5)
            root.localizedDescription = "Downloading 5 files"
            root.estimationClock = clock
            let terminal = VirtualTerminal(columns: width, rows: 30)
            let renderer = makeTestRenderer(root, output: terminal, clock: clock)
            let files = ["big.bin", "b.bin", "c.bin", "nope1", "nope2"].map { name in
                let file = ProgressNode(totalUnitCount: 30_000_000, parent: root, pendingUnitCount: 1)
                file.kind = .file
                file.fileOperationKind = .downloading
                file.fileURL = URL(fileURLWithPath: "/tmp/\(name)")
                return file
            }
            var screens: [[String]] = []
            for step in 0..<8 {
                if step == 3 {
                    files[3].fail(Reason(description: "HTTP 404 (Not Found)"))
                    files[4].fail(Reason(description: "HTTP 404 (Not Found)"))
                }
                clock.advance(by: .milliseconds(100))
                for file in files.prefix(3) { file.advance(by: 300_000) }
                renderer.drawFrame()
                screens.append(terminal.visibleLines)
            }
            XCTAssertTrue(screens[0][0].hasPrefix("• Downloading 5 files  "), "\(width): \(screens[0][0])")
            XCTAssertTrue(
                screens.last![0].hasPrefix("• Downloading 5 files · 2 failed "), "\(width): \(screens.last![0])")
            XCTAssertEqual(
                screens.last!.filter { $0.contains("nope") },
                [
                    "  ! Downloading “nope1” — failed: HTTP 404 (Not Found)",
                    "  ! Downloading “nope2” — failed: HTTP 404 (Not Found)",
                ])
            let bars = Set(screens.joined().compactMap { bar(of: $0).map { "\($0.start)+\($0.width)" } })
            XCTAssertEqual(bars.count, 1, "\(width) columns: bars at \(bars.sorted())")
        }
    }
}
