/// What a line of the live display shows, and how: which columns in what order, the bar, the colours.
///
/// The defaults give lines like
/// ```
/// ⠹ Importing 12 photos      ██████████▌░░░░░░░░░  52%  6 of 12 photos  1.2 MB/s  4 s
///     ✓ IMG_0001.jpg         ████████████████████ 100%  2.1 MB
/// ```
/// When the terminal is narrow, what a person needs most survives: every label keeps `minimumLabelWidth`
/// columns of text, and for that columns go in `dropOrder` — throughput, counts, time remaining, the bar,
/// and last the percentage. The widths are planned once per terminal width and kept by every frame (see
/// `Docs/Terminal.md`, "Steady columns"). A failed line whose reason does not fit its label column takes
/// the rest of its own line for it.
public struct TerminalLayout: Sendable {
    /// A column of a line.
    public enum Column: Sendable, Hashable, CaseIterable {
        /// Indentation, a state mark or spinner, and the node's label. Takes the width left over.
        case label
        /// The progress bar; a moving pulse for indeterminate nodes.
        case bar
        /// The percentage, `" 42%"`; blank for indeterminate nodes.
        case percent
        /// Counts or bytes: `"6 of 12 photos"`, `"4.5 MB of 9 MB"`.
        case counts
        /// Throughput, `"1.2 MB/s"`, when known.
        case throughput
        /// Estimated time remaining, `"4 s"`, when known.
        case timeRemaining
    }

    /// The columns, left to right.
    public var columns: [Column] = [.label, .bar, .percent, .counts, .throughput, .timeRemaining]
    /// Which columns to give up first when the labels cannot stay readable (see `minimumLabelWidth`): the
    /// least needed first. By default the throughput (the time remaining says more), then the counts (the
    /// percentage says how far), then the time remaining (an estimate, absent at first), then the bar (the
    /// percentage again, drawn), and last the percentage.
    public var dropOrder: [Column] = [.throughput, .counts, .timeRemaining, .bar, .percent]
    /// The width of the bar: as wide as the upper bound when there is room once the labels shown have what
    /// they need (up to half the line), never narrower than the lower (below it, the bar gives way).
    public var barWidth: ClosedRange<Int> = 10...30
    /// How much of a label stays readable before other columns give way: the columns of its text after
    /// its indentation and mark (a shorter label is shown whole). A label cut to fit keeps what tells it
    /// apart: a quoted file name before the words around it ("“IMG_0001.jpg”…" for "Downloading
    /// “IMG_0001.jpg”…"), the start and end of a long name ("IMG_2024…0001.jpg").
    public var minimumLabelWidth = 16
    /// The characters of the bar.
    public var bar = BarStyle.blocks
    /// Spaces of indentation per level of depth.
    public var indentation = 2
    /// Frames of the spinner shown for indeterminate, running nodes.
    public var spinner: [String] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
    /// Colours of the parts of a line (ignored when colour is off, for example under `NO_COLOR`).
    public var colors = ColorScheme()

    /// The default layout; change its properties to customize it.
    public init() {}

    /// The default layout.
    public static let `default` = TerminalLayout()

    /// How a bar is drawn.
    public struct BarStyle: Sendable {
        /// A full cell.
        public var filled: Character
        /// Partially filled cells, from least to most filled (empty for whole cells only).
        public var partial: [Character]
        /// An empty cell.
        public var empty: Character

        /// A bar of `filled` and `empty` cells, with `partial` cells (least to most filled) for fractions of
        /// a cell. Each character should be one column wide.
        public init(filled: Character, partial: [Character] = [], empty: Character) {
            self.filled = filled
            self.partial = partial
            self.empty = empty
        }

        /// Unicode blocks with eighths: smooth, readable without colour.
        public static let blocks = BarStyle(
            filled: "█", partial: ["▏", "▎", "▍", "▌", "▋", "▊", "▉"], empty: "░")
        /// Plain ASCII, for terminals without Unicode fonts.
        public static let ascii = BarStyle(filled: "#", empty: "-")
    }

    /// Colours of the parts of a line.
    public struct ColorScheme: Sendable {
        /// The bar of a running node.
        public var bar: TerminalStyle = .cyan
        /// The mark and bar of a finished node.
        public var finished: TerminalStyle = .green
        /// The mark and bar of a paused node.
        public var paused: TerminalStyle = .yellow
        /// The mark and bar of a cancelled node: work stopped on purpose, shown quieter than a failure.
        public var cancelled: TerminalStyle = .dim
        /// The mark (`!`) and bar of a failed node.
        public var failed: TerminalStyle = .red
        /// The spinner and pulse of an indeterminate node.
        public var spinner: TerminalStyle = .magenta
        /// Counts, throughput, time remaining and finished labels.
        public var secondary: TerminalStyle = .dim

        /// The default colours.
        public init() {}
    }
}
