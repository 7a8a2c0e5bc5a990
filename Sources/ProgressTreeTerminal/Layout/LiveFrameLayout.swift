/// The text lines of a live frame, each exactly `columns - 1` columns wide: the rows the mirror captured
/// (aligned by `LineFormatter`, which keeps one column plan per terminal width), a "+N more" line for the lines
/// hidden, the summary of a run with failures (final frame) and the hint.
struct LiveFrameLayout {
    /// The most lines the summary of a run with failures takes in the final frame.
    static let summaryLineLimit = 3

    private let layout: TerminalLayout
    private let colors: Bool
    private var formatter: LineFormatter

    init(layout: TerminalLayout, colors: Bool) {
        self.layout = layout
        self.colors = colors
        formatter = LineFormatter(layout: layout, colors: colors)
    }

    /// The lines for `capture` on a terminal of `size`, at most `capacity` of them before the hint (the
    /// rows were captured to fit: `capacity` is the row limit the mirror was given).
    mutating func lines(
        for capture: TreeMemory.Capture, size: TerminalSize, capacity: Int, tick: Int, final: Bool, hint: String?
    ) -> [String] {
        let width = max(1, size.columns - 1)
        var lines = formatter.format(Self.sayingPaused(capture.rows), columns: size.columns, tick: tick, final: final)
        if capture.hidden > 0 {
            lines.append(
                TerminalStyle.dim.apply(
                    to: DisplayWidth.pad("  … +\(capture.hidden) more", toColumns: width), colors: colors))
        }
        if final, let root = capture.root, !OutcomeSummary.repeatsRootLine(root, columns: width),
            let summary = OutcomeSummary.text(for: root)
        {
            // The last lines of a run with failures say so (wrapped onto at most `summaryLineLimit` lines,
            // fewer if the terminal is short); they take the place of the last rows when the frame is as
            // tall as the terminal allows.
            let limit = max(1, min(Self.summaryLineLimit, capacity - 1))
            let summaryLines = OutcomeSummary.lines(summary, width: width, limit: limit)
            while !lines.isEmpty, lines.count + summaryLines.count > capacity { lines.removeLast() }
            for line in summaryLines {
                lines.append(layout.colors.failed.apply(to: DisplayWidth.pad(line, toColumns: width), colors: colors))
            }
        }
        if let hint {
            lines.append(TerminalStyle.dim.apply(to: DisplayWidth.pad(hint, toColumns: width), colors: colors))
        }
        return lines
    }

    /// The rows' contents, the topmost paused line of each paused subtree saying so in words after its
    /// name ("Importing 12 photos · paused"), before its summaries: the mark `‖` alone is a glyph whose
    /// meaning must be known. Lines below it, paused with it, keep the mark only. It gives way on a narrow
    /// line as a summary does.
    static func sayingPaused(_ rows: [TreeMemory.Row]) -> [LineContent] {
        var paused = Set<Int>()
        return rows.map { row in
            var content = row.content
            guard content.status == .paused else { return content }
            paused.insert(row.id)
            if row.parentID.map({ !paused.contains($0) }) ?? true { content.summaries.insert("paused", at: 0) }
            return content
        }
    }
}
