/// Builds the bytes that replace the previous live frame with the next one, in place.
///
/// The cursor rests at the start of the line below the live area. A frame moves up over the old area and
/// rewrites every line at full width (padding with spaces instead of clearing, so a line is never blank
/// for a moment), blanks lines the new frame no longer needs, and wraps it all in synchronized-output
/// markers. Lines printed through the renderer are written first, where the live area was, so they stay
/// above it in the scrollback.
///
/// After the terminal changed width, the old lines may have been rewrapped by the terminal into several
/// rows each: the frame moves up over all the rows they may take and clears to the end of the screen once.
struct LiveFrameComposer {
    private(set) var previousLines: [String] = []
    private(set) var hasDrawn = false
    /// The terminal width the previous frame was drawn for.
    private var previousColumns = 0

    /// Forgets the area on screen: the next frame is drawn in full where the cursor is, as the first one
    /// (after the process was stopped and continued, the shell has written below the old area).
    mutating func startOnNewScreen() {
        guard hasDrawn else { return }
        previousLines = []
        needsCursorHidden = true
    }

    /// Whether the next frame hides the cursor (the first frame, and the first after `startOnNewScreen`).
    private var needsCursorHidden = true

    /// The bytes to write for a terminal of `size`, or `nil` when nothing changed. Lines are
    /// `size.columns − 1` columns wide.
    mutating func compose(lines: [String], printed: [String], size: TerminalSize, final: Bool = false) -> String? {
        let resized = hasDrawn && size.columns != previousColumns
        if hasDrawn && lines == previousLines && printed.isEmpty && !final && !resized && !needsCursorHidden {
            return nil
        }
        let width = max(1, size.columns - 1)
        var out = ANSI.beginSynchronizedUpdate
        if needsCursorHidden { out += ANSI.hideCursor }
        needsCursorHidden = false
        if resized {
            // A terminal that rewraps (most do) turns each old line, `previousColumns - 1` cells wide,
            // into ceil(cells / columns) rows. Moving up further than the screen is pointless.
            let oldWidth = max(1, previousColumns - 1)
            let rowsPerLine = (oldWidth + size.columns - 1) / max(1, size.columns)
            let up = min(previousLines.count * rowsPerLine, max(0, size.rows - 1))
            out += "\r" + ANSI.cursorUp(up) + ANSI.clearToEndOfScreen
        } else {
            out += "\r" + ANSI.cursorUp(previousLines.count)
        }
        for line in printed { out += line + ANSI.clearToEndOfLine + "\n" }
        for line in lines { out += line + "\n" }
        let leftover = previousLines.count - printed.count - lines.count
        if leftover > 0 && !resized {  // after a resize, the screen below is already clear
            out += String(repeating: String(repeating: " ", count: width) + "\n", count: leftover)
            out += ANSI.cursorUp(leftover)
        }
        if final { out += ANSI.showCursor }
        out += ANSI.endSynchronizedUpdate
        previousLines = lines
        previousColumns = size.columns
        hasDrawn = true
        return out
    }
}
