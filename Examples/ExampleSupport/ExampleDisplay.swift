import ProgressTree
import ProgressTreeTerminal

/// What every example that shows a tree sets up around its work: a `TerminalRenderer` for the root, a
/// key reader while live, and the signals (`InterruptHandler`): Ctrl-C cancels the root; a second Ctrl-C,
/// `SIGTERM` and `SIGHUP` stop the display and exit at once (130, 143, 129).
public final class ExampleDisplay: Sendable {
    /// The keys an example reads while live.
    public enum Keys: Sendable {
        /// None to press, but a key reader keeps what is typed from being echoed over the live area.
        case ignored
        /// `p` pauses the root, `r` resumes it, `c` cancels it; a hint under the tree says so.
        case pauseResumeCancel
        /// `c` cancels the root, for work that cannot pause; a hint under the tree says so.
        case cancel
    }

    public let renderer: TerminalRenderer
    private let keys: TerminalKeyReader?
    private let interrupts: InterruptHandler

    /// - Parameters:
    ///   - cleanUp: before the display stops on a second Ctrl-C, `SIGTERM` or `SIGHUP` (then the
    ///     renderer and the key reader stop, and `exit` is called).
    ///   - exit: ends the process with the status given (`exit(3)` by default).
    public init(
        _ root: ProgressNode, mode: TerminalRenderer.Mode, keys: Keys,
        cleanUp: @escaping @Sendable () -> Void = {},
        exit: (@Sendable (_ status: Int32) -> Never)? = nil
    ) {
        var options = TerminalRenderer.Options()
        let keyReader = TerminalKeyReader()  // nil when standard input is not a terminal
        if keyReader != nil {
            switch keys {
            case .ignored: break
            case .pauseResumeCancel: options.hint = "Keys: p pause · r resume · c cancel · Ctrl-C cancel"
            case .cancel: options.hint = "Keys: c cancel · Ctrl-C cancel"
            }
        }
        let renderer = TerminalRenderer(root, mode: mode, options: options)
        let liveKeys = renderer.mode == .live ? keyReader : nil
        let onInterrupt: @Sendable () -> Void = { root.cancel() }
        let stopShowing: @Sendable () -> Void = {
            cleanUp()
            renderer.stop()
            liveKeys?.stop()
        }
        if let exit {
            interrupts = InterruptHandler(onInterrupt: onInterrupt, cleanUp: stopShowing, exit: exit)
        } else {
            interrupts = InterruptHandler(onInterrupt: onInterrupt, cleanUp: stopShowing)
        }
        switch keys {
        case .ignored:
            liveKeys?.start { _ in }
        case .pauseResumeCancel:
            liveKeys?.start { key in
                switch key {
                case "p": root.pause()
                case "r": root.resume()
                case "c": root.cancel()
                default: break
                }
            }
        case .cancel:
            liveKeys?.start { key in if key == "c" { root.cancel() } }
        }
        self.renderer = renderer
        self.keys = liveKeys
    }

    /// Stops drawing (the final frame stays), restores the terminal's mode, and gives the signals back
    /// their default action.
    public func stop() {
        renderer.stop()
        keys?.stop()
        interrupts.stop()
    }
}
