/// Builds the bytes that replace the previous live frame with the next one, in place.
///
/// The cursor rests at the start of the line below the live area. A frame moves up over the old area and
/// rewrites every line at full width (padding with spaces instead of clearing, so a line is never blank
/// for a moment), blanks lines the new frame no longer needs, and wraps it all in synchronized-output
/// markers. Lines printed through the renderer are written first, where the live area was, so they stay
/// above it in the scrollback.
struct LiveFrameComposer {
    private(set) var previousLines: [String] = []
    private(set) var hasDrawn = false

    /// The bytes to write, or `nil` when nothing changed.
    mutating func compose(lines: [String], printed: [String], width: Int, final: Bool = false) -> String? {
        if hasDrawn && lines == previousLines && printed.isEmpty && !final { return nil }
        var out = ANSI.beginSynchronizedUpdate
        if !hasDrawn { out += ANSI.hideCursor }
        out += "\r" + ANSI.cursorUp(previousLines.count)
        for line in printed { out += line + ANSI.clearToEndOfLine + "\n" }
        for line in lines { out += line + "\n" }
        let leftover = previousLines.count - printed.count - lines.count
        if leftover > 0 {
            out += String(repeating: String(repeating: " ", count: width) + "\n", count: leftover)
            out += ANSI.cursorUp(leftover)
        }
        if final { out += ANSI.showCursor }
        out += ANSI.endSynchronizedUpdate
        previousLines = lines
        hasDrawn = true
        return out
    }
}
