/// The width of each column, planned once for a terminal width and kept by every frame drawn at it (see
/// `LineFormatter.format`): columns are aligned across all lines of every frame.
///
/// The plan makes room for what the lines may come to show, not only for what they show: the counts as
/// wide as they can grow ("12 of 12" where "0 of 12" is shown, "1.6 MB of 1.6 MB"), a throughput and a
/// time remaining when a running line with a size is read with its estimates (the root, whose throughput
/// comes from files that may appear later, and nodes that describe files). This is where the priority of
/// the columns is applied:
/// 1. Every label stays readable: its text (after its indent and mark) keeps `minimumLabelWidth` columns,
///    or all of a shorter one. For that, whole columns go in `TerminalLayout.dropOrder` (the bar is kept
///    only at `barWidth.lowerBound` or more).
/// 2. The room left goes to the labels shown, whole, up to half the line; then to the bar, up to
///    `barWidth.upperBound`; then to the labels, for longer ones to come. A label shown whole includes
///    the note a line with children may come to show, " · 2 failed" (`failureNoteReserve`): a failure
///    below never cuts a label the plan showed whole.
/// A line's own failure takes no room of the plan: a failed line that cannot show its reason in its label
/// column takes its own other columns for it (`LineFormatter.render`).
struct ColumnPlan {
    private(set) var widths: [TerminalLayout.Column: Int] = [:]
    /// The columns this plan made room for (whether they got it or gave way): a frame whose lines may show
    /// another needs a new plan.
    let considered: Set<TerminalLayout.Column>
    /// The label column this plan keeps labels readable in (before the terminal's width caps it): a frame
    /// with a line deeper than `deepest` that needs more needs a new plan.
    private(set) var readableLabelWidth: Int
    /// The depth of the deepest line of the frames this plan (and the plans before it at this width) was
    /// made for.
    let deepest: Int

    /// The width reserved for a throughput not known yet: "12.3 MB/s".
    static let throughputReserve = 9
    /// The width reserved for a time remaining not known yet: "1m 05s".
    static let timeRemainingReserve = 6

    /// The width of a failure note: " · 99 failed", the room kept after a label for a note of up to 99
    /// failures below it.
    static let failureNoteWidth = 12

    /// The room `line` keeps after its name and summaries for a note counting failures below it: that
    /// note's width on a line that counts some, `failureNoteWidth` (or that much) on a line with children
    /// that may come to count some, nothing on any other line (a line's own failure takes no room of the
    /// plan: it takes its other columns).
    static func failureNoteReserve(_ line: LineContent) -> Int {
        guard line.failureReason == nil else { return 0 }
        let shown = line.outcomes.failedCount > 0 ? DisplayWidth.of(line.failureText) : 0
        return line.hasChildren ? max(shown, failureNoteWidth) : shown
    }

    /// The columns of `layout` that `lines` show or may come to show.
    static func columnsShown(by lines: [LineContent], layout: TerminalLayout) -> Set<TerminalLayout.Column> {
        // A running line with a size that is read with its estimates may come to show both: the root's
        // throughput comes from the files below it, which may appear later.
        let estimates = lines.contains {
            !$0.isIndeterminate && ($0.status == .running || $0.status == .paused) && $0.readsEstimates
        }
        var shown: Set<TerminalLayout.Column> = [.label, .bar, .percent]
        if lines.contains(where: { !$0.counts.isEmpty }) { shown.insert(.counts) }
        if estimates || lines.contains(where: { $0.throughputText != nil }) { shown.insert(.throughput) }
        if estimates || lines.contains(where: { $0.timeRemainingColumnText != nil }) { shown.insert(.timeRemaining) }
        return shown.intersection(layout.columns)
    }

    /// The widest the counts of `line` can become while its total stays: "0 of 12" as "12 of 12",
    /// "197 KB of 1.6 MB" as "1.6 MB of 1.6 MB".
    static func countsReserve(_ line: LineContent) -> Int {
        let text = line.counts
        guard let of = firstOf(in: text) else { return DisplayWidth.of(text) }
        let done = text[..<of.lowerBound]
        let words = done.split(separator: " ").count
        let total = text[of.upperBound...].split(separator: " ").prefix(words).joined(separator: " ")
        return DisplayWidth.of(text) - DisplayWidth.of(done) + max(DisplayWidth.of(done), DisplayWidth.of(total))
    }

    /// The range of the first " of " in `text`, as `text.firstRange(of: " of ")` finds it, searched in its
    /// UTF-8 bytes (the generic search cost 20,000 instructions a call, half of a first frame's column plan).
    /// The bounds fall on the spaces, ASCII, so they are valid indices of `text`; a match of the bytes is
    /// taken only when its characters match too (a combining mark after the last space makes it another
    /// character).
    static func firstOf(in text: String) -> Range<String.Index>? {
        let utf8 = text.utf8
        let pattern: [UInt8] = [0x20, 0x6F, 0x66, 0x20]  // " of "
        var start = utf8.startIndex
        while let space = utf8[start...].firstIndex(of: 0x20) {
            var candidate = space
            var matched = 0
            while matched < pattern.count, candidate < utf8.endIndex, utf8[candidate] == pattern[matched] {
                candidate = utf8.index(after: candidate)
                matched += 1
            }
            if matched == pattern.count, text[space...].hasPrefix(" of ") { return space..<candidate }
            start = utf8.index(after: space)
        }
        return nil
    }

    /// The columns a line takes before its label's text: indent, mark (a spinner frame may be two columns
    /// wide), a space.
    static func lead(_ line: LineContent, layout: TerminalLayout) -> Int {
        let mark =
            line.isIndeterminate && line.status == .running
            ? (layout.spinner.map { DisplayWidth.of($0) }.max() ?? 1) : 1
        return line.depth * layout.indentation + mark + 1
    }

    /// The label column `lines` need to keep every label readable: its lead and `minimumLabelWidth`
    /// columns of its text, or all of a shorter one.
    static func readableLabelWidth(of lines: [LineContent], layout: TerminalLayout) -> Int {
        lines.map { lead($0, layout: layout) + min(DisplayWidth.of($0.name), layout.minimumLabelWidth) }.max() ?? 0
    }

    /// A plan for `lines` in `width` columns, making room for the `considered` columns and for labels
    /// readable in `readableLabelWidth` columns (the most any line of a frame at this width needed);
    /// `deepest`: the depth of the deepest line of those frames.
    init(
        layout: TerminalLayout, lines: [LineContent], width: Int,
        considering considered: Set<TerminalLayout.Column>, readableLabelWidth: Int, deepest: Int
    ) {
        self.considered = considered
        self.deepest = deepest
        self.readableLabelWidth = readableLabelWidth
        func widest(_ text: (LineContent) -> String?) -> Int {
            lines.map { DisplayWidth.of(text($0) ?? "") }.max() ?? 0
        }
        var natural: [TerminalLayout.Column: Int] = [:]
        for column in layout.columns where considered.contains(column) {
            switch column {
            case .label: natural[.label] = 0
            case .bar: natural[.bar] = layout.barWidth.lowerBound
            case .percent: natural[.percent] = 4
            case .counts: natural[.counts] = max(1, lines.map(Self.countsReserve).max() ?? 0)
            case .throughput: natural[.throughput] = max(widest { $0.throughputText }, Self.throughputReserve)
            case .timeRemaining:
                natural[.timeRemaining] = max(widest { $0.timeRemainingColumnText }, Self.timeRemainingReserve)
            }
        }
        guard natural[.label] != nil else {
            widths = natural
            return
        }
        // A label column is never narrower than a readable label of the root, so that labels to come
        // (children not shown yet) stay readable too.
        self.readableLabelWidth = max(readableLabelWidth, 2 + layout.minimumLabelWidth)
        let labelMinimum = min(width, self.readableLabelWidth)
        // A label shown whole with its summaries ("Importing 12 photos · 2 skipped") and the failures it may
        // come to count below it; a line's own failure takes no room.
        let whole =
            lines.map {
                Self.lead($0, layout: layout) + DisplayWidth.of($0.name + $0.summaryText) + Self.failureNoteReserve($0)
            }.max() ?? 0
        func used(_ columns: [TerminalLayout.Column: Int]) -> Int {
            columns.filter { $0.key != .label }.values.reduce(0, +) + max(0, columns.count - 1)
        }
        // Readable labels first: columns go, least needed first, until they fit.
        var drops = layout.dropOrder[...]
        while width - used(natural) < labelMinimum, let column = drops.popFirst() {
            natural[column] = nil
        }
        // The labels shown, whole (up to half the line); then the bar; the rest goes to the labels.
        let labelShown = max(labelMinimum, min(whole, width / 2))
        let room = max(0, width - used(natural) - labelShown)
        if let bar = natural[.bar] {
            natural[.bar] = bar + min(room, max(0, layout.barWidth.upperBound - bar))
        }
        natural[.label] = max(1, width - used(natural))
        widths = natural
    }
}
