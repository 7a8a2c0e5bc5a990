#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import ProgressTreePlatform
@testable import ProgressTreeTerminal
import XCTest

/// What the `SIGINT`, `SIGTERM` and `SIGHUP` handlers write before the signal's default action, on the
/// write end of a pipe (the default action itself is tested on the examples, as child processes).
final class SignalRestorationTests: XCTestCase {
    private let restored = "\u{1B}[?2026l\u{1B}[0m\u{1B}[?25h\n"

    func test_a_signal_clears_the_taskbar_progress_a_renderer_shows() throws {
        let written = try written { descriptor in
            SignalRestoration.taskbarProgress(shown: true, on: descriptor)
            SignalRestoration.restoreBeforeTermination()
        }
        XCTAssertEqual(written, restored + "\u{1B}]9;4;0;0\u{07}")
    }

    func test_a_signal_writes_no_taskbar_progress_when_none_is_shown() throws {
        let never = try written { _ in SignalRestoration.restoreBeforeTermination() }
        XCTAssertEqual(never, restored)
        let cleared = try written { descriptor in
            SignalRestoration.taskbarProgress(shown: true, on: descriptor)
            SignalRestoration.taskbarProgress(shown: false, on: descriptor)  // the renderer's own clearing
            SignalRestoration.restoreBeforeTermination()
        }
        XCTAssertEqual(cleared, restored)
    }

    func test_the_taskbar_progress_of_another_descriptor_is_not_the_signals_to_clear() throws {
        let written = try written { descriptor in
            SignalRestoration.taskbarProgress(shown: true, on: descriptor + 1000)
            SignalRestoration.restoreBeforeTermination()
        }
        XCTAssertEqual(written, restored)
    }

    /// A program that handles a signal itself keeps its handling whole, the flags it set with `sigaction`
    /// included: the handlers are set only where the disposition, read without changing it, is the default.
    func test_a_handler_is_set_only_over_the_default_and_a_programs_own_keeps_its_flags() {
        defer { signal(SIGUSR2, SIG_DFL) }
        signal(SIGUSR2, SIG_DFL)
        XCTAssertTrue(Signals.setHandlerIfDefault(SIGUSR2, { _ in }))
        var own = sigaction()
        sigaction(SIGUSR2, nil, &own)
        own.sa_flags |= SA_NODEFER
        sigaction(SIGUSR2, &own, nil)
        XCTAssertFalse(Signals.setHandlerIfDefault(SIGUSR2, { _ in }))
        var now = sigaction()
        sigaction(SIGUSR2, nil, &now)
        XCTAssertNotEqual(now.sa_flags & SA_NODEFER, 0, "the program's flags are kept")
    }

    /// What the handlers write while the cursor is hidden on the write end of a pipe, read back once it is
    /// closed.
    private func written(by body: (Int32) -> Void) throws -> String {
        writtenToPipe { descriptor in
            SignalRestoration.cursorHidden(on: descriptor)
            body(descriptor)
            SignalRestoration.cursorRestored()
        }
    }
}
