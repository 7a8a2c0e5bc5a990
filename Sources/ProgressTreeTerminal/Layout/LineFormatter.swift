/// Turns the lines of one frame into text of an exact width, columns aligned across lines.
///
/// Widths are display widths (wide characters count two), computed on plain text; colours are applied
/// after cutting, so escape sequences never count toward the width.
struct LineFormatter {
    let layout: TerminalLayout
    let colors: Bool
    /// Widths carried from frame to frame while the terminal keeps its width (see `format`): the least
    /// width of each text column and the label's need, and the width the bar keeps.
    private var stickyWidths: [TerminalLayout.Column: Int] = [:]
    /// The terminal width `stickyWidths` were measured at.
    private var stickyColumns = 0

    init(layout: TerminalLayout, colors: Bool) {
        self.layout = layout
        self.colors = colors
    }

    /// Formats `lines` for a terminal `columns` wide: every returned line is exactly `columns - 1` columns
    /// of visible text (the last column stays free, so a full line never wraps). `tick` advances spinners
    /// and pulses (one step per frame).
    ///
    /// Widths are sticky while the terminal keeps its width: the text columns and the label's need never
    /// narrow, and the bar keeps the width of the first frame (it narrows only when a column that appeared
    /// later leaves the label less than its minimum, or for a failure: see `ColumnPlan`), so the bar does
    /// not jump as numbers and labels change length: the label gives way. A new terminal width starts
    /// afresh. The `final` frame keeps no width for text columns whose values are gone (the counts,
    /// throughput and time remaining of finished work): nothing moves after it, and the room goes to the
    /// labels.
    mutating func format(_ lines: [LineContent], columns: Int, tick: Int, final: Bool = false) -> [String] {
        if stickyColumns != columns {
            stickyWidths = [:]
            stickyColumns = columns
        }
        if final {
            for column in [TerminalLayout.Column.counts, .throughput, .timeRemaining] {
                stickyWidths[column] = nil
            }
        }
        let width = max(1, columns - 1)
        let plan = ColumnPlan(layout: layout, lines: lines, width: width, minimums: stickyWidths)
        for column in [TerminalLayout.Column.counts, .throughput, .timeRemaining] {
            if let used = plan.widths[column] { stickyWidths[column] = max(stickyWidths[column] ?? 0, used) }
        }
        stickyWidths[.label] = max(stickyWidths[.label] ?? 0, plan.labelNeed)
        if let bar = plan.widths[.bar] { stickyWidths[.bar] = bar }
        return lines.map { render($0, plan: plan, width: width, tick: tick) }
    }

    private func render(_ line: LineContent, plan: ColumnPlan, width: Int, tick: Int) -> String {
        var parts: [String] = []
        for column in layout.columns where plan.widths[column] != nil {
            let columnWidth = plan.widths[column]!
            switch column {
            case .label:
                parts.append(label(line, width: columnWidth, tick: tick))
            case .bar:
                parts.append(bar(line, width: columnWidth, tick: tick))
            case .percent:
                let percent = WholePercent.of(line.fraction, isFinished: line.status == .finished)
                let text = line.isIndeterminate ? "" : "\(percent)%"
                parts.append(leftPad(text, columnWidth))
            case .counts:
                parts.append(style(DisplayWidth.pad(line.counts, toColumns: columnWidth), layout.colors.secondary))
            case .throughput:
                parts.append(style(leftPad(line.throughputText ?? "", columnWidth), layout.colors.secondary))
            case .timeRemaining:
                parts.append(style(leftPad(line.timeRemainingColumnText ?? "", columnWidth), layout.colors.secondary))
            }
        }
        return parts.joined(separator: " ")
    }

    private func label(_ line: LineContent, width: Int, tick: Int) -> String {
        let indent = String(repeating: " ", count: min(line.depth * layout.indentation, max(0, width - 4)))
        let (mark, markStyle) = self.mark(line, tick: tick)
        // A mark is one column, except spinner frames, which may be wide (emoji are two).
        let room = width - indent.count - DisplayWidth.of(mark) - 1
        let text = DisplayWidth.pad(Self.fit(line, toColumns: max(0, room)), toColumns: max(0, room))
        let labelStyle: TerminalStyle = line.status == .finished ? layout.colors.secondary : .plain
        return indent + style(mark, markStyle) + " " + style(text, labelStyle)
    }

    /// The label column's text cut to `columns`. On a line that tells of a failure, the name is cut before
    /// the failure: the name keeps what the failure leaves, but at least as much as the reason gets after
    /// " — failed: " (or its own width).
    static func fit(_ line: LineContent, toColumns columns: Int) -> String {
        let whole = line.shownLabel
        guard line.showsFailure, !line.label.isEmpty, DisplayWidth.of(whole) > columns else {
            return DisplayWidth.truncate(whole, toColumns: columns)
        }
        let failure = line.failureText
        let lead = DisplayWidth.of(line.failureReason == nil ? failure : LineContent.failedLead)
        let nameRoom = min(
            DisplayWidth.of(line.label), max(columns - DisplayWidth.of(failure), (columns - lead) / 2))
        return DisplayWidth.truncate(line.label, toColumns: nameRoom)
            + DisplayWidth.truncate(failure, toColumns: columns - nameRoom)
    }

    private func mark(_ line: LineContent, tick: Int) -> (String, TerminalStyle) {
        switch line.status {
        case .finished: return ("✓", layout.colors.finished)
        case .cancelled: return ("✗", layout.colors.cancelled)
        case .failed: return ("!", layout.colors.failed)
        case .paused: return ("‖", layout.colors.paused)
        case .running:
            if line.isIndeterminate, !layout.spinner.isEmpty {
                return (layout.spinner[tick % layout.spinner.count], layout.colors.spinner)
            }
            return ("•", layout.colors.bar)
        }
    }

    private func bar(_ line: LineContent, width: Int, tick: Int) -> String {
        let style = layout.bar
        let barStyle: TerminalStyle =
            switch line.status {
            case .finished: layout.colors.finished
            case .cancelled: layout.colors.cancelled
            case .failed: layout.colors.failed
            case .paused: layout.colors.paused
            case .running: layout.colors.bar
            }
        if line.isIndeterminate && line.status != .running {
            // Nothing is moving: an empty bar rather than a pulse frozen where it stopped.
            return String(repeating: String(style.empty), count: width)
        }
        if line.isIndeterminate {
            // A pulse of three cells bouncing across the bar.
            let pulse = min(3, width)
            let span = max(1, width - pulse)
            let step = tick % (2 * span)
            let start = step <= span ? step : 2 * span - step
            let text =
                String(repeating: String(style.empty), count: start)
                + String(repeating: String(style.filled), count: pulse)
                + String(repeating: String(style.empty), count: max(0, width - start - pulse))
            return self.style(text, layout.colors.spinner)
        }
        let levels = style.partial.count + 1
        let filledLevels = Int((min(max(line.fraction, 0), 1) * Double(width * levels)).rounded(.down))
        let full = filledLevels / levels
        let remainder = filledLevels % levels
        var filled = String(repeating: String(style.filled), count: full)
        var used = full
        if remainder > 0, used < width {
            filled.append(style.partial[remainder - 1])
            used += 1
        }
        return self.style(filled, barStyle) + String(repeating: String(style.empty), count: width - used)
    }

    private func leftPad(_ text: String, _ width: Int) -> String {
        let cut = DisplayWidth.truncate(text, toColumns: width)
        return String(repeating: " ", count: max(0, width - DisplayWidth.of(cut))) + cut
    }

    private func style(_ text: String, _ style: TerminalStyle) -> String {
        style.apply(to: text, colors: colors)
    }
}

/// The width of each shown column for one frame: columns are aligned across all lines of the frame.
///
/// This is where the priority of the columns is applied (see `TerminalLayout.dropOrder`): the label keeps
/// at least `minimumLabelWidth`; to make room for it, the bar first shrinks to `barWidth.lowerBound`,
/// then whole columns go in `dropOrder`. Room left over goes to the label up to half the line (room for
/// longer labels that appear later, not only for the labels shown: the bar keeps its width), then to the
/// bar up to `barWidth.upperBound`, then to the label again. The part of that room the shown labels do
/// not need is a guess: it leaves the bar at least half its full width (`barKeptFromGuess`).
///
/// A failure is part of the label (priority 1): a line that tells of one ("— failed: reason", "· 1 failed")
/// asks for its whole label, past half the line, and keeps at least `failureLabelWidth` of it (or all of a
/// shorter one). For that minimum columns go in `dropOrder` as for the label's; for the rest of the label
/// the bar gives way down to `barWidth.lowerBound`, also a bar kept from earlier frames.
struct ColumnPlan {
    private(set) var widths: [TerminalLayout.Column: Int] = [:]
    /// The width the labels asked for (kept from frame to frame as the label column's minimum).
    private(set) var labelNeed = 0

    /// `minimums` holds what earlier frames at this width used: the least width of each text column and
    /// of the label's need, and for `.bar` the width the bar keeps.
    init(layout: TerminalLayout, lines: [LineContent], width: Int, minimums: [TerminalLayout.Column: Int] = [:]) {
        func widest(_ text: (LineContent) -> String?) -> Int {
            lines.map { DisplayWidth.of(text($0) ?? "") }.max() ?? 0
        }
        var natural: [TerminalLayout.Column: Int] = [:]
        for column in layout.columns {
            switch column {
            case .label: natural[.label] = layout.minimumLabelWidth
            case .bar: natural[.bar] = layout.barWidth.lowerBound
            case .percent: natural[.percent] = 4
            case .counts: natural[.counts] = max(widest { $0.counts }, minimums[.counts] ?? 0)
            case .throughput: natural[.throughput] = max(widest { $0.throughputText }, minimums[.throughput] ?? 0)
            case .timeRemaining:
                natural[.timeRemaining] = max(widest { $0.timeRemainingColumnText }, minimums[.timeRemaining] ?? 0)
            }
        }
        // Columns with nothing to show take no room.
        for (column, value) in natural where value == 0 && column != .label { natural[column] = nil }

        // Indent, mark (a spinner frame may be two columns wide), a space, the label.
        let spinnerWidth = layout.spinner.map { DisplayWidth.of($0) }.max() ?? 1
        func need(_ line: LineContent) -> Int {
            let mark = line.isIndeterminate && line.status == .running ? spinnerWidth : 1
            return line.depth * layout.indentation + mark + 1 + DisplayWidth.of(line.shownLabel)
        }
        let labelCap = max(layout.minimumLabelWidth, width / 2)
        let labelNeed = min(max(lines.map(need).max() ?? 0, minimums[.label] ?? 0), labelCap)
        self.labelNeed = labelNeed
        let failureNeed = min(width, lines.filter(\.showsFailure).map(need).max() ?? 0)
        let labelMinimum = max(layout.minimumLabelWidth, min(failureNeed, Self.failureLabelWidth(layout, width: width)))
        let labelWanted = max(labelNeed, failureNeed)
        func used(_ columns: [TerminalLayout.Column: Int]) -> Int {
            columns.filter { $0.key != .label }.values.reduce(0, +) + max(0, columns.count - 1)
        }
        guard natural[.label] != nil else {
            widths = natural
            return
        }
        // The label's minimum first: columns go, least needed first, until it fits.
        var drops = layout.dropOrder[...]
        while width - used(natural) < labelMinimum, let column = drops.popFirst() {
            natural[column] = nil
        }
        if let bar = natural[.bar] {
            let room = width - used(natural) - labelMinimum
            // The width kept from earlier frames (narrowed for a failure's label), or, at the first frame,
            // what the label leaves when it is given room for what later, longer labels will need (its
            // share of the line, `labelCap`), not only for what the first labels need: the bar keeps this
            // width, so labels that appear later are not cut to their minimum. That room is a guess, so it
            // takes the bar no narrower than half its full width; what the shown labels need may.
            let kept = minimums[.bar].map { min($0, bar + room - max(0, failureNeed - labelMinimum)) }
            let besideShownLabels = bar + room - max(0, labelWanted - labelMinimum)
            let besideLaterLabels = bar + room - max(0, max(labelWanted, labelCap) - labelMinimum)
            let wanted = kept ?? max(besideLaterLabels, min(besideShownLabels, Self.barKeptFromGuess(layout)))
            natural[.bar] = bar + max(0, min(room, min(wanted, layout.barWidth.upperBound) - bar))
        }
        natural[.label] = max(1, width - used(natural))
        widths = natural
    }

    /// The least width the room guessed for later labels leaves the bar at the first frame (labels shown
    /// may take it further, down to `barWidth.lowerBound`): half the bar's full width.
    static func barKeptFromGuess(_ layout: TerminalLayout) -> Int {
        max(layout.barWidth.lowerBound, layout.barWidth.upperBound / 2)
    }

    /// The least width of the label column on a line that tells of a failure, indent and mark included:
    /// half the line, and at least twice `minimumLabelWidth`: room for the name and some of the reason.
    static func failureLabelWidth(_ layout: TerminalLayout, width: Int) -> Int {
        max(2 * layout.minimumLabelWidth, width / 2)
    }
}
