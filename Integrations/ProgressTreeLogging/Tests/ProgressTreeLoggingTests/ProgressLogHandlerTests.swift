import Logging
import ProgressTree
import ProgressTreeLogging
import ProgressTreeTerminal
import XCTest

/// A logger whose records go to `handler` alone (no `LoggingSystem.bootstrap`: tests run in one process).
private func logger(_ handler: ProgressLogHandler) -> Logger {
    Logger(label: handler.label) { _ in handler }
}

/// A record as swift-log hands it to a handler.
private func event(_ level: Logger.Level, _ message: Logger.Message, metadata: Logger.Metadata? = nil) -> LogEvent {
    LogEvent(
        level: level, message: message, metadata: metadata, source: "test", file: #fileID, function: #function, line: 1)
}

final class ProgressLogHandlerTests: XCTestCase {
    // MARK: Live mode

    func testLiveRecordIsDrawnAboveTheLiveAreaWhichIsRedrawnBelowIt() {
        let screen = ScreenModel()
        let root = makeRoot("Importing 4 photos", total: 4)
        let renderer = makeRenderer(root, output: screen)
        renderer.drawFrame()
        let frameBefore = screen.lines
        XCTAssertEqual(frameBefore.count, 1)
        XCTAssertTrue(frameBefore[0].hasPrefix("• Importing 4 photos"), frameBefore[0])

        root.completedUnitCount = 2
        logger(ProgressLogHandler(label: "photo-import", renderer: renderer))
            .warning("skipped IMG_0004.jpg (duplicate)", metadata: ["photo": "IMG_0004.jpg"])

        // Drawn at once, before `log` returns: the record, then the live area redrawn (with the new count).
        let lines = screen.lines
        XCTAssertEqual(lines.count, 2)
        XCTAssertEqual(lines[0], "warning photo-import: skipped IMG_0004.jpg (duplicate) [photo=IMG_0004.jpg]")
        XCTAssertTrue(lines[1].hasPrefix("• Importing 4 photos"), lines[1])
        XCTAssertTrue(lines[1].contains("2 of 4"), lines[1])
        renderer.stop()
    }

    func testRecordsKeepTheirOrderAboveTheLiveAreaAcrossFrames() {
        let screen = ScreenModel()
        let root = makeRoot("Sync", total: 2)
        let renderer = makeRenderer(root, output: screen)
        let log = logger(ProgressLogHandler(label: "sync", renderer: renderer))
        renderer.drawFrame()
        log.info("first")
        root.completedUnitCount = 1
        renderer.drawFrame()
        log.info("second")
        renderer.stop()
        let lines = screen.lines
        XCTAssertEqual(Array(lines.prefix(2)), ["info sync: first", "info sync: second"])
        XCTAssertEqual(lines.count, 3)
        XCTAssertTrue(lines[2].hasPrefix("✓ Sync") || lines[2].contains("Sync"), lines[2])
    }

    func testControlCharactersInARecordAreShownAsSpaces() {
        let screen = ScreenModel()
        let root = makeRoot("Import")
        let renderer = makeRenderer(root, output: screen)
        renderer.drawFrame()
        logger(ProgressLogHandler(label: "im\u{1B}port", renderer: renderer))
            .error("bad\u{1B}[2J name\rhere\u{9B}31m", metadata: ["fi\u{7}le": "a\u{1B}]0;title\u{7}b\nc"])
        let lines = screen.lines
        // A carriage return starts a new line, as in `TerminalRenderer.print(_:)`: it cannot go back over the
        // level and label.
        XCTAssertEqual(lines[0], "error im port: bad [2J name")
        XCTAssertEqual(lines[1], "here 31m [fi le=a ]0;title b c]")
        XCTAssertTrue(lines[2].contains("Import"), lines[2])
        XCTAssertFalse(screen.written.contains("\u{1B}[2J"))
        XCTAssertFalse(screen.written.contains("\u{1B}]0;"))
        XCTAssertFalse(screen.written.contains("\u{9B}"))
        renderer.stop()
    }

    func testAMessageWithLineBreaksIsSeveralLinesWithTheMetadataAfterTheLast() {
        let lines = recordedLines { $0.info("two\nlines\n", metadata: ["k": "v"]) }
        XCTAssertEqual(lines, ["info t: two", "lines [k=v]"])
    }

    // MARK: Levels

    func testRecordsBelowTheHandlersLevelAreDropped() {
        let screen = ScreenModel()
        let renderer = makeRenderer(makeRoot("Work"), mode: .plain, output: screen)
        var handler = ProgressLogHandler(label: "t", renderer: renderer)
        handler.logLevel = .warning
        // Called directly, as a handler that does not check levels (a multiplexer of its own) would.
        handler.log(event: event(.info, "dropped"))
        handler.log(event: event(.notice, "dropped too"))
        handler.log(event: event(.warning, "kept"))
        handler.log(event: event(.critical, "kept too"))
        // And through a logger.
        let log = logger(handler)
        log.debug("dropped")
        log.error("kept through a logger")
        XCTAssertEqual(screen.lines, ["warning t: kept", "critical t: kept too", "error t: kept through a logger"])
    }

    func testTheDefaultLevelIsInfo() {
        XCTAssertEqual(
            recordedLines { log in
                log.trace("no")
                log.debug("no")
                log.info("yes")
            }, ["info t: yes"])
    }

    // MARK: Metadata

    func testMetadataIsSortedByKeyWithTheRecordsOwnWinning() {
        var handler = ProgressLogHandler(
            label: "photo-import", console: ProgressLogConsole(fallback: ScreenModel()),
            metadataProvider: Logger.MetadataProvider { ["request": "7", "photo": "from provider"] })
        handler[metadataKey: "album"] = "Summer"
        handler[metadataKey: "photo"] = "from handler"
        let screen = handler.console.fallback as! ScreenModel
        logger(handler).notice(
            "imported", metadata: ["photo": "IMG_0001.jpg", "size": ["w": "4", "h": "3"], "tags": ["a", "b"]])
        logger(handler).info("plain")
        XCTAssertEqual(
            screen.lines,
            [
                "notice photo-import: imported [album=Summer photo=IMG_0001.jpg request=7 size=[h: 3, w: 4] tags=[a, b]]",
                "info photo-import: plain [album=Summer photo=from provider request=7]",
            ])
    }

    func testARecordsErrorIsShownAsMetadata() {
        struct Duplicate: Error, CustomStringConvertible { var description: String { "duplicate of IMG_0001.jpg" } }
        let screen = ScreenModel()
        let handler = ProgressLogHandler(label: "t", console: ProgressLogConsole(fallback: screen))
        var record = event(.error, "skipped")
        record.error = Duplicate()
        handler.log(event: record)
        XCTAssertEqual(screen.lines, ["error t: skipped [error=duplicate of IMG_0001.jpg]"])
    }

    func testAnEmptyLabelLeavesTheLevelAndTheMessage() {
        let screen = ScreenModel()
        logger(ProgressLogHandler(label: "", console: ProgressLogConsole(fallback: screen))).info("hello")
        XCTAssertEqual(screen.lines, ["info: hello"])
    }

    func testProgressMetadataNamesTheGivenNode() {
        let screen = ScreenModel()
        let photo = makeRoot("IMG_0004.jpg")
        var handler = ProgressLogHandler(label: "t", console: ProgressLogConsole(fallback: screen))
        handler.progressNode = .node(photo)
        logger(handler).info("reading")
        XCTAssertEqual(screen.lines, ["info t: reading [progress=IMG_0004.jpg]"])
    }

    func testProgressMetadataIsTheNodesPathInItsTree() {
        let screen = ScreenModel()
        let album = makeRoot("Import")
        let photo = ProgressNode(totalUnitCount: 1, parent: album, pendingUnitCount: 0)
        photo.localizedDescription = "IMG_0004.jpg"
        var handler = ProgressLogHandler(label: "t", console: ProgressLogConsole(fallback: screen))
        handler.progressNode = .node(photo)
        logger(handler).info("reading")
        XCTAssertEqual(screen.lines, ["info t: reading [progress=Import › IMG_0004.jpg]"])
    }

    func testProgressMetadataNamesTheCurrentNodeWhenThereIsOne() async {
        let screen = ScreenModel()
        var handler = ProgressLogHandler(label: "t", console: ProgressLogConsole(fallback: screen))
        handler.progressNode = .current
        let log = logger(handler)
        let photo = makeRoot("IMG_0007.jpg")
        log.info("outside")
        await photo.withCurrent(pendingUnitCount: 0) {
            await Task.yield()  // after a suspension too: the binding is the task's, not the thread's
            log.info("inside a task")
        }
        XCTAssertEqual(screen.lines, ["info t: outside", "info t: inside a task [progress=IMG_0007.jpg]"])
    }

    /// Inside `withCancellationLink` the record names the linked node (issue 49, item 9: before, `.current`
    /// found nothing there); a node made current inside the linked task is innermost, and names itself.
    func testProgressMetadataNamesTheNodeOfALinkedTask() async throws {
        let screen = ScreenModel()
        var handler = ProgressLogHandler(label: "t", console: ProgressLogConsole(fallback: screen))
        handler.progressNode = .current
        let log = logger(handler)
        let album = makeRoot("Import", total: 2)
        let photo = ProgressNode(totalUnitCount: 1, parent: album, pendingUnitCount: 1)
        photo.localizedDescription = "IMG_0007.jpg"
        let filter = ProgressNode(totalUnitCount: 1, parent: photo, pendingUnitCount: 0)
        filter.localizedDescription = "filter"
        try await photo.withCancellationLink {
            await Task.yield()
            log.info("downloading")
            filter.withCurrent(pendingUnitCount: 0) { log.info("filtering") }
            log.info("saved")
        }
        let task = album.task { log.info("in the album's task") }
        try await task.value
        log.info("outside")
        XCTAssertEqual(
            screen.lines,
            [
                "info t: downloading [progress=Import › IMG_0007.jpg]",
                "info t: filtering [progress=Import › IMG_0007.jpg › filter]",
                "info t: saved [progress=Import › IMG_0007.jpg]",
                "info t: in the album's task [progress=Import]",
                "info t: outside",
            ])
    }

    // MARK: Plain, accessible, json and none modes

    /// Accessible mode: each record a line of its own, between the sentences (before, the console sent
    /// them to its fallback, beside the renderer's output).
    func testAccessibleModeWritesEachRecordAsALineOfItsOwnBetweenTheSentences() {
        let screen = ScreenModel()
        let root = makeRoot("Work", total: 2)
        let renderer = makeRenderer(root, mode: .accessible, output: screen)
        let log = logger(ProgressLogHandler(label: "t", renderer: renderer))
        renderer.start()
        log.info("one")
        root.completedUnitCount = 1
        renderer.drawFrame()
        log.warning("two", metadata: ["k": "v"])
        root.completedUnitCount = 2
        renderer.stop()
        XCTAssertEqual(
            screen.lines,
            [
                "Work: started, 0 of 2.", "info t: one", "Work: 50 percent, 1 of 2.", "warning t: two [k=v]",
                "Work finished: 2 of 2.",
            ])
    }

    func testPlainModeWritesOneLinePerRecordAmongTheProgressLines() {
        let screen = ScreenModel()
        let root = makeRoot("Work", total: 2)
        let renderer = makeRenderer(root, mode: .plain, output: screen)
        let log = logger(ProgressLogHandler(label: "t", renderer: renderer))
        renderer.start()
        log.info("one")
        log.warning("two", metadata: ["k": "v"])
        root.completedUnitCount = 2
        renderer.stop()
        let lines = screen.lines
        XCTAssertEqual(
            lines.filter { $0.hasPrefix("info t:") || $0.hasPrefix("warning t:") },
            ["info t: one", "warning t: two [k=v]"])
        XCTAssertFalse(screen.written.contains("\u{1B}"))
        XCTAssertTrue(lines.last?.contains("Work") == true, "\(lines)")
    }

    func testJsonModeKeepsTheRenderersOutputJSONOnlyAndWritesRecordsToTheFallback() {
        let json = ScreenModel()
        let records = ScreenModel()
        let root = makeRoot("Work", total: 2)
        let renderer = makeRenderer(root, mode: .json, output: json)
        let log = logger(
            ProgressLogHandler(label: "t", console: ProgressLogConsole(renderer: renderer, fallback: records)))
        renderer.start()
        log.info("while running")
        root.completedUnitCount = 1
        renderer.drawFrame()
        log.error("still running")
        root.completedUnitCount = 2
        renderer.stop()
        log.info("after stop")
        XCTAssertFalse(json.lines.isEmpty)
        for line in json.lines {
            XCTAssertTrue(line.hasPrefix("{\"v\":1,") && line.hasSuffix("}"), line)
        }
        XCTAssertEqual(records.lines, ["info t: while running", "error t: still running", "info t: after stop"])
    }

    func testNoneModeWritesRecordsToTheFallback() {
        let quiet = ScreenModel()
        let records = ScreenModel()
        let renderer = makeRenderer(makeRoot("Work"), mode: .none, output: quiet)
        logger(ProgressLogHandler(label: "t", console: ProgressLogConsole(renderer: renderer, fallback: records)))
            .info("shown")
        XCTAssertEqual(records.lines, ["info t: shown"])
        XCTAssertEqual(quiet.written, "")
    }

    // MARK: Before the first frame, after stop, without a renderer

    func testARecordLoggedRightBeforeStopIsOnScreenAboveTheFinalFrame() {
        let screen = ScreenModel()
        let root = makeRoot("Work", total: 1)
        let renderer = makeRenderer(root, output: screen)
        let log = logger(ProgressLogHandler(label: "t", renderer: renderer))
        renderer.drawFrame()
        root.completedUnitCount = 1
        log.notice("last words")
        renderer.stop()
        let lines = screen.lines
        XCTAssertEqual(lines.count, 2, "\(lines)")
        XCTAssertEqual(lines[0], "notice t: last words")
        XCTAssertTrue(lines[1].contains("Work"), lines[1])
    }

    func testARecordLoggedAfterStopIsAPlainLineBelowTheFinalFrame() {
        let screen = ScreenModel()
        let renderer = makeRenderer(makeRoot("Work", total: 1), output: screen)
        let log = logger(ProgressLogHandler(label: "t", renderer: renderer))
        renderer.drawFrame()
        renderer.stop()
        let final = screen.lines
        let writtenBefore = screen.written
        log.info("after")
        XCTAssertEqual(screen.lines, final + ["info t: after"])
        XCTAssertEqual(String(screen.written.dropFirst(writtenBefore.count)), "info t: after\n")
    }

    func testAHandlerMadeBeforeTheRendererStartsWritesPlainLinesThenAboveTheLiveArea() {
        let screen = ScreenModel()
        let root = makeRoot("Work")
        let renderer = makeRenderer(root, output: screen)
        let log = logger(ProgressLogHandler(label: "t", renderer: renderer))
        log.info("before the first frame")
        renderer.drawFrame()
        log.info("while live")
        renderer.stop()
        let lines = screen.lines
        XCTAssertEqual(Array(lines.prefix(2)), ["info t: before the first frame", "info t: while live"])
        XCTAssertEqual(lines.count, 3, "\(lines)")
    }

    func testAConsoleWithoutARendererWritesToItsFallbackAndToARendererOnceAttached() {
        let fallback = ScreenModel()
        let screen = ScreenModel()
        let console = ProgressLogConsole(fallback: fallback)
        let log = logger(ProgressLogHandler(label: "t", console: console))
        log.info("no renderer yet")
        let renderer = makeRenderer(makeRoot("Work"), output: screen)
        console.renderer = renderer
        renderer.drawFrame()
        log.info("attached")
        console.renderer = nil
        log.info("detached")
        renderer.stop()
        XCTAssertEqual(fallback.lines, ["info t: no renderer yet", "info t: detached"])
        XCTAssertEqual(screen.lines.first, "info t: attached")
        XCTAssertEqual(screen.lines.count, 2)
    }

    func testTwoHandlersOverOneRendererShareItsLiveArea() {
        let screen = ScreenModel()
        let renderer = makeRenderer(makeRoot("Work"), output: screen)
        let first = logger(ProgressLogHandler(label: "first", renderer: renderer))
        let console = ProgressLogConsole(renderer: renderer, fallback: ScreenModel())
        let second = logger(ProgressLogHandler(label: "second", console: console))
        renderer.drawFrame()
        first.info("a")
        second.info("b")
        first.info("c")
        let lines = screen.lines
        XCTAssertEqual(Array(lines.prefix(3)), ["info first: a", "info second: b", "info first: c"])
        XCTAssertEqual(lines.count, 4, "\(lines)")
        XCTAssertTrue(lines[3].contains("Work"), lines[3])
        renderer.stop()
    }

    // MARK: Threads

    func testRecordsFromEightThreadsWhileFramesDrawAreWholeLines() async {
        let screen = ScreenModel()
        let root = makeRoot("Busy", total: 8 * 100)
        let renderer = makeRenderer(root, output: screen)
        let log = logger(ProgressLogHandler(label: "t", renderer: renderer))
        renderer.drawFrame()
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<8 {
                group.addTask {
                    for index in 0..<100 {
                        log.info("record \(thread)-\(index)", metadata: ["n": "\(index)"])
                        root.completedUnitCount += 1
                    }
                }
            }
            group.addTask {
                for _ in 0..<200 { renderer.drawFrame() }
            }
        }
        renderer.stop()
        let lines = screen.lines
        let records = lines.filter { $0.hasPrefix("info") }
        XCTAssertEqual(records.count, 800)
        XCTAssertEqual(Set(records).count, 800)
        for line in records {
            XCTAssertNotNil(line.wholeMatch(of: /info t: record [0-7]-([0-9]+) \[n=\1\]/), line)
        }
        // Everything else is the final frame, once, at the end.
        XCTAssertEqual(lines.count, 801, "\(lines.suffix(3))")
        XCTAssertTrue(lines[800].contains("Busy"), lines[800])
    }

    func testRecordsThroughEightConsolesToOneFallbackAreWholeLines() async {
        // An output that takes each write one character at a time, as a write longer than a pipe's atomic
        // size may be taken: only the consoles' own serializing keeps two records apart.
        let output = CharacterByCharacterOutput()
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<8 {
                let log = logger(ProgressLogHandler(label: "t", console: ProgressLogConsole(fallback: output)))
                group.addTask {
                    for index in 0..<100 { log.info("record \(thread)-\(index)") }
                }
            }
        }
        let lines = output.text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        XCTAssertEqual(lines.count, 800)
        XCTAssertEqual(Set(lines).count, 800)
        for line in lines {
            XCTAssertNotNil(line.wholeMatch(of: /info t: record [0-7]-[0-9]+/), String(line))
        }
    }

    // MARK: Helpers

    /// The lines written by records that `body` logs through a handler labelled "t" without a renderer.
    private func recordedLines(_ body: (Logger) -> Void) -> [String] {
        let screen = ScreenModel()
        body(logger(ProgressLogHandler(label: "t", console: ProgressLogConsole(fallback: screen))))
        return screen.lines
    }
}
