/// Turns the lines of one frame into text of an exact width, columns aligned across lines.
///
/// Widths are display widths (wide characters count two), computed on plain text; colours are applied
/// after cutting, so escape sequences never count toward the width.
struct LineFormatter {
    let layout: TerminalLayout
    let colors: Bool
    /// The plan every frame at `plannedColumns` uses (see `format`).
    private var plan: ColumnPlan?
    /// The terminal width `plan` was made for.
    private var plannedColumns = 0

    init(layout: TerminalLayout, colors: Bool) {
        self.layout = layout
        self.colors = colors
    }

    /// Formats `lines` for a terminal `columns` wide: every returned line is exactly `columns - 1` columns
    /// of visible text (the last column stays free, so a full line never wraps). `tick` advances spinners
    /// and pulses (one step per frame).
    ///
    /// Steady: the first frame at a width plans the columns (`ColumnPlan`) for what its lines may come to
    /// show, and every later frame at that width, the final one included, uses the same plan: the bar
    /// starts at the same column with the same width, and no column moves as values change length, longer
    /// labels come, estimates appear or work fails (a failed line takes its own columns for its reason,
    /// never another line's). A plan is made anew only for a new width, when a line may show a column
    /// that no line could when the plan was made (a search shown by a spinner becomes a copy with
    /// throughput and time remaining), or when a line comes whose label would not be readable in the
    /// plan's label column and that is deeper than any before (a mounted worker's photos below its first
    /// line; a longer label at a depth already seen is cut to the label column), but never for the
    /// `final` frame: a column that appears only there (the "1 of 1" of a spinner's work, once done) is
    /// not shown.
    mutating func format(_ lines: [LineContent], columns: Int, tick: Int, final: Bool = false) -> [String] {
        let width = max(1, columns - 1)
        let wanted = ColumnPlan.columnsShown(by: lines, layout: layout)
        let readable = ColumnPlan.readableLabelWidth(of: lines, layout: layout)
        let deepest = lines.map(\.depth).max() ?? 0
        // A deeper line whose label would not be readable needs room; a longer label at a depth the plan
        // has seen is cut to the label column, as planned.
        let outgrown = plan.map {
            !final
                && (!wanted.isSubset(of: $0.considered) || (deepest > $0.deepest && readable > $0.readableLabelWidth))
        }
        if plannedColumns != columns || outgrown ?? true {
            let sameWidth = plannedColumns == columns
            let considered = sameWidth ? wanted.union(plan?.considered ?? []) : wanted
            plan = ColumnPlan(
                layout: layout, lines: lines, width: width, considering: considered,
                readableLabelWidth: sameWidth ? max(readable, plan?.readableLabelWidth ?? 0) : readable,
                deepest: sameWidth ? max(deepest, plan?.deepest ?? 0) : deepest)
            plannedColumns = columns
        }
        return lines.map { render($0, plan: plan!, width: width, tick: tick) }
    }

    /// One column of one line before it is drawn: its planned width, and its text when it is a text
    /// column (counts, throughput, time remaining).
    private struct Cell {
        let column: TerminalLayout.Column
        var width: Int
        let text: String?
        let alignsRight: Bool
    }

    private func render(_ line: LineContent, plan: ColumnPlan, width: Int, tick: Int) -> String {
        var cells: [Cell] = []
        for column in layout.columns {
            guard let columnWidth = plan.widths[column] else { continue }
            switch column {
            case .label, .bar, .percent:
                cells.append(Cell(column: column, width: columnWidth, text: nil, alignsRight: false))
            case .counts:
                cells.append(Cell(column: column, width: columnWidth, text: line.counts, alignsRight: false))
            case .throughput:
                cells.append(
                    Cell(column: column, width: columnWidth, text: line.throughputText ?? "", alignsRight: true))
            case .timeRemaining:
                cells.append(
                    Cell(
                        column: column, width: columnWidth, text: line.timeRemainingColumnText ?? "", alignsRight: true)
                )
            }
        }
        // A failed line whose reason does not fit its label column takes the rest of its own line for it:
        // its bar, percentage and counts give way to why it stopped. Other lines keep their columns.
        if line.status == .failed, let index = cells.firstIndex(where: { $0.column == .label }),
            DisplayWidth.of(line.shownLabel) > labelRoom(line, width: cells[index].width, tick: tick)
        {
            let rest = cells[index...].reduce(0) { $0 + $1.width + 1 } - 1
            cells = Array(cells[...index])
            cells[index].width = rest
        }
        Self.lend(&cells)
        var parts: [String] = []
        for cell in cells {
            switch cell.column {
            case .label:
                parts.append(label(line, width: cell.width, tick: tick))
            case .bar:
                parts.append(bar(line, width: cell.width, tick: tick))
            case .percent:
                let percent = WholePercent.of(line.fraction, isFinished: line.status == .finished)
                parts.append(leftPad(line.isIndeterminate ? "" : "\(percent)%", cell.width))
            case .counts, .throughput, .timeRemaining:
                let text = cell.text ?? ""
                let padded =
                    cell.alignsRight ? leftPad(text, cell.width) : DisplayWidth.pad(text, toColumns: cell.width)
                parts.append(style(padded, layout.colors.secondary))
            }
        }
        return parts.joined(separator: " ")
    }

    /// Room left empty on a line goes to what the line had to cut: a text wider than its column takes the
    /// cells its neighbour leaves blank on this line (a left-aligned text those of the column to its right,
    /// a right-aligned one those of the column to its left), when that neighbour is a text column too.
    /// The columns keep their places: only the blank cells change hands.
    private static func lend(_ cells: inout [Cell]) {
        for index in cells.indices {
            guard let text = cells[index].text else { continue }
            let missing = DisplayWidth.of(text) - cells[index].width
            guard missing > 0 else { continue }
            let neighbour = cells[index].alignsRight ? index - 1 : index + 1
            guard cells.indices.contains(neighbour), let other = cells[neighbour].text else { continue }
            let blank = cells[neighbour].width - DisplayWidth.of(other)
            let lent = min(missing, max(0, blank))
            cells[neighbour].width -= lent
            cells[index].width += lent
        }
    }

    /// The columns the label's text has in a label column `width` wide (after the indent and the mark).
    private func labelRoom(_ line: LineContent, width: Int, tick: Int) -> Int {
        width - indent(line, width: width).count - DisplayWidth.of(mark(line, tick: tick).0) - 1
    }

    private func indent(_ line: LineContent, width: Int) -> String {
        String.repeated(" ", count: min(line.depth * layout.indentation, max(0, width - 4)))
    }

    private func label(_ line: LineContent, width: Int, tick: Int) -> String {
        let indent = indent(line, width: width)
        let (mark, markStyle) = self.mark(line, tick: tick)
        // A mark is one column, except spinner frames, which may be wide (emoji are two).
        let room = max(0, labelRoom(line, width: width, tick: tick))
        let text = DisplayWidth.pad(
            Self.fit(line, toColumns: room, readable: layout.minimumLabelWidth), toColumns: room)
        let labelStyle: TerminalStyle = line.status == .finished ? layout.colors.secondary : .plain
        return indent + style(mark, markStyle) + " " + style(text, labelStyle)
    }

    /// The label column's text cut to `columns`. The name is cut so that it stays readable (see
    /// `cut(_:toColumns:)`). On a line that tells of a failure, the name and its summaries are cut before
    /// the failure: they keep what the failure leaves, but at least as much as the reason gets after
    /// " — failed: " (or their own width). Summaries come after the name's readability: see
    /// `nameAndSummaries(_:toColumns:readable:)`.
    static func fit(_ line: LineContent, toColumns columns: Int, readable: Int) -> String {
        let whole = line.shownLabel
        guard DisplayWidth.of(whole) > columns else { return whole }
        guard line.showsFailure, !line.name.isEmpty else {
            return line.name.isEmpty
                ? DisplayWidth.truncate(whole, toColumns: columns)
                : nameAndSummaries(line, toColumns: columns, readable: readable)
        }
        let failure = line.failureText
        let lead = DisplayWidth.of(line.failureReason == nil ? failure : LineContent.failedLead)
        let headRoom = min(
            DisplayWidth.of(line.name + line.summaryText),
            max(columns - DisplayWidth.of(failure), (columns - lead) / 2))
        let head = nameAndSummaries(line, toColumns: headRoom, readable: readable)
        return head + DisplayWidth.truncate(failure, toColumns: columns - DisplayWidth.of(head))
    }

    /// The name and the summaries that fit after it in `columns`: the name keeps `readable` columns (or all
    /// of a shorter name) first; then each summary, in order, is shown whole if it fits after it, the name
    /// cut to leave it room; the summaries that do not fit whole are left out (a count cut in the middle
    /// would say another number).
    static func nameAndSummaries(_ line: LineContent, toColumns columns: Int, readable: Int) -> String {
        let keeps = min(DisplayWidth.of(line.name), readable)
        var shown: [String] = []
        var used = 0
        for summary in line.summaries {
            let width = DisplayWidth.of(" · " + summary)
            guard keeps + used + width <= columns else { break }
            shown.append(summary)
            used += width
        }
        let summaries = shown.map { " · " + $0 }.joined()
        return cut(line.name, toColumns: columns - used) + summaries
    }

    /// `name` cut to `columns` so that what tells it apart stays: in a label that quotes a name
    /// ("Downloading “IMG_0001.jpg”…", the default label of a file), the words before the quote go first,
    /// then the middle of the quoted name, which keeps its start and its end (the extension, a number);
    /// any other label keeps its start and ends in "…".
    static func cut(_ name: String, toColumns columns: Int) -> String {
        guard DisplayWidth.of(name) > columns else { return name }
        if let open = name.firstIndex(of: "“"), let close = name[open...].firstIndex(of: "”") {
            let suffix = String(name[name.index(after: close)...])
            let quoted = String(name[open...close])
            if DisplayWidth.of(quoted + suffix) <= columns { return quoted + suffix }
            let room = columns - 2 - DisplayWidth.of(suffix)
            if room >= 3 {
                return "“" + DisplayWidth.truncateMiddle(String(quoted.dropFirst().dropLast()), toColumns: room) + "”"
                    + suffix
            }
        }
        return DisplayWidth.truncate(name, toColumns: columns)
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
            return String.repeated(String(style.empty), count: width)
        }
        if line.isIndeterminate {
            // A pulse of three cells bouncing across the bar.
            let pulse = min(3, width)
            let span = max(1, width - pulse)
            let step = tick % (2 * span)
            let start = step <= span ? step : 2 * span - step
            let text =
                String.repeated(String(style.empty), count: start)
                + String.repeated(String(style.filled), count: pulse)
                + String.repeated(String(style.empty), count: max(0, width - start - pulse))
            return self.style(text, layout.colors.spinner)
        }
        let levels = style.partial.count + 1
        let filledLevels = Int((min(max(line.fraction, 0), 1) * Double(width * levels)).rounded(.down))
        let full = filledLevels / levels
        let remainder = filledLevels % levels
        var filled = String.repeated(String(style.filled), count: full)
        var used = full
        if remainder > 0, used < width {
            filled.append(style.partial[remainder - 1])
            used += 1
        }
        return self.style(filled, barStyle) + String.repeated(String(style.empty), count: width - used)
    }

    private func leftPad(_ text: String, _ width: Int) -> String {
        let cut = DisplayWidth.truncate(text, toColumns: width)
        return String.repeated(" ", count: max(0, width - DisplayWidth.of(cut))) + cut
    }

    private func style(_ text: String, _ style: TerminalStyle) -> String {
        style.apply(to: text, colors: colors)
    }
}
