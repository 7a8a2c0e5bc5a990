import ProgressTreePlatform
@testable import ProgressTreeTerminal
import XCTest

/// The two small state machines behind signals (issue 49): who writes to the terminal when a signal
/// arrives (`ScreenOwnership`), and what each Ctrl-C asks for (`Interrupts`).
final class StateMachineTests: XCTestCase {
    func test_a_signal_during_a_frame_waits_for_it_and_the_renderer_acts_on_it() {
        let screen = ScreenOwnership()
        XCTAssertTrue(screen.tryBeginDrawing())
        XCTAssertEqual(screen.signalArrived(Signals.terminalStop), .deferred)
        XCTAssertEqual(screen.current, .drawingWithSignalWaiting)
        XCTAssertEqual(screen.endDrawing(), Signals.terminalStop, "the renderer acts on it")
        XCTAssertEqual(screen.current, .handling, "owning the screen as the handler would")
        XCTAssertFalse(screen.tryBeginDrawing(), "no frame while it acts")
        screen.endHandling()
        XCTAssertEqual(screen.current, .idle)
    }

    func test_a_signal_between_frames_acts_at_once_and_a_frame_waits_for_it() {
        let screen = ScreenOwnership()
        XCTAssertEqual(screen.signalArrived(Signals.terminalStop), .actOwning)
        XCTAssertFalse(screen.tryBeginDrawing())
        screen.endHandling()
        XCTAssertTrue(screen.tryBeginDrawing())
        XCTAssertNil(screen.endDrawing(), "nothing waited")
        XCTAssertEqual(screen.current, .idle)
    }

    /// A second signal while one waits, or while a handler acts, acts at once: a frame whose write is
    /// held (a terminal paused with Ctrl-S) cannot hold Ctrl-Z or SIGTERM for ever.
    func test_a_second_signal_acts_at_once() {
        let screen = ScreenOwnership()
        XCTAssertTrue(screen.tryBeginDrawing())
        XCTAssertEqual(screen.signalArrived(Signals.terminalStop), .deferred)
        XCTAssertEqual(screen.signalArrived(Signals.terminate), .actForced)
        XCTAssertEqual(screen.endDrawing(), Signals.terminalStop)
        XCTAssertEqual(screen.signalArrived(Signals.hangUp), .actForced)
    }

    func test_the_first_ctrl_c_interrupts_the_work_and_the_next_signals_exit_with_their_status() {
        let first = Interrupts()
        XCTAssertFalse(first.wasInterrupted)
        XCTAssertEqual(first.received(Signals.interrupt), .interruptWork)
        XCTAssertTrue(first.wasInterrupted)
        XCTAssertEqual(first.received(Signals.interrupt), .exit(130))
        XCTAssertEqual(Interrupts().received(Signals.terminate), .exit(143))
        XCTAssertEqual(Interrupts().received(Signals.hangUp), .exit(129))
        let terminated = Interrupts()
        XCTAssertEqual(terminated.received(Signals.terminate), .exit(143))
        XCTAssertFalse(terminated.wasInterrupted)
        XCTAssertEqual(TerminalInterrupts.interruptedExitStatus, 130)
        XCTAssertEqual(TerminalInterrupts.terminatedExitStatus, 143)
        XCTAssertEqual(TerminalInterrupts.hungUpExitStatus, 129)
    }
}
