/// The cursor of a terminal a program draws on itself (without a `TerminalRenderer`), hidden with the
/// renderer's safety net: on Ctrl-C, `SIGTERM` or `SIGHUP`, unless the program handles that signal itself,
/// a signal handler shows the cursor again before the process ends; on Ctrl-Z before it stops (and hides
/// it again on `fg`).
///
/// ```swift
/// TerminalCursor.hide(on: .standardOutput)
/// // … redraw a line in place …
/// TerminalCursor.show(on: .standardOutput)
/// ```
///
/// The handler restores one descriptor, shared with live renderers: hide the cursor on one terminal at a
/// time.
public enum TerminalCursor {
    /// Hides the cursor on `output`, after arming the handler that shows it again on a signal.
    public static func hide(on output: FileDescriptorOutput) {
        SignalRestoration.cursorHidden(on: output.descriptor)  // armed first: never hidden without the net
        output.write(ANSI.hideCursor)
    }

    /// Shows the cursor on `output` again and disarms the handler.
    public static func show(on output: FileDescriptorOutput) {
        output.write(ANSI.showCursor)
        SignalRestoration.cursorRestored()
    }
}
