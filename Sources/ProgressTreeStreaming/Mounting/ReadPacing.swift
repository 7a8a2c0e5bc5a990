/// How long the publishers a process mounts are asked to wait between two walks, decided from how many
/// reads the process's streams' thread (`StreamReactor`) makes a second: the reader's side of the wire
/// format's `interval` command (`Docs/WireFormat.md`, "Commands").
///
/// Every publisher writes one line a walk for each node that changed, and each of those comes in a read of
/// its own once many publishers share the thread (each stream has one line waiting when its turn comes):
/// a thousand publishers at the default 50 ms cost 20,000 reads a second, 17–23% of a core here, mostly
/// the kernel's work for each read and the parsing, for lines no display shows apart. The process keeps
/// its reads near `budget` a second: above `raiseAbove` (5% over), it asks for walks far enough apart to
/// come back to the budget (the reads are in inverse proportion to the interval); below `lowerBelow` (5%
/// under), closer again (at most twice as close a step), down to no request at all. Between the two bounds
/// nothing changes: a steady load gets a steady interval and no stream of commands. The bounds are close,
/// so that a first request made from a rough count (publishers still starting) is corrected at the next
/// window; they are about as far apart as the step of the interval (10 ms: 6% at 160 ms), and a change
/// that would round to the interval in place is none, so that it settles instead of going to and fro. The window after a change is not used, as the publishers take the
/// request during it; and a window in which streams were added raises nothing (connecting comes in
/// bursts), though it may lower.
///
/// Reads, not CPU time, are what it counts: they follow the publishers alone, so that the interval (and
/// with it the time a change takes to reach an observer) does not move with the machine's load or with
/// what else the thread does (observers of the mirrored nodes add their signals to it). At the budget, a
/// read costs 9–15 µs here, so the thread spends 6–10% of a core; a thousand publishers (about 19,000 to
/// 20,000 reads a second at their own 50 ms) are asked for 150–160 ms, and a change then reaches an
/// observer of the parent within about 175–185 ms at the 99th percentile.
///
/// A pure state machine: it is handed what the thread counted and says what to ask for. It runs on the
/// reactor's thread only.
struct ReadPacing {
    /// The reads a second the streams' thread aims at once it paces.
    static let budget = 6_300.0
    /// Above this many reads a second, the interval asked for grows.
    static let raiseAbove = budget * 1.05
    /// Below this many reads a second, the interval asked for shrinks.
    static let lowerBelow = budget * 0.95
    /// Publishers' own default interval: asking for this or less asks for nothing.
    static let floorMilliseconds = 50
    /// The longest interval ever asked for: a change still reaches the reader within a second or so.
    static let ceilingMilliseconds = 1000

    /// The interval asked for, in milliseconds; 0 when none is (publishers walk at their own interval).
    private(set) var milliseconds = 0
    /// Whether the last window changed the interval (the next one is not used).
    private var isSettling = false

    /// Takes the reads a second over the last measuring window, and whether streams were added during it;
    /// whether `milliseconds` changed.
    mutating func update(readsPerSecond: Double, streamsAdded: Bool = false) -> Bool {
        guard readsPerSecond.isFinite, readsPerSecond >= 0 else { return false }
        guard !isSettling else {
            isSettling = false
            return false
        }
        let current = milliseconds
        if readsPerSecond > Self.raiseAbove, !streamsAdded {
            let base = Double(max(current, Self.floorMilliseconds))
            milliseconds = Self.rounded(base * readsPerSecond / Self.budget)
        } else if readsPerSecond < Self.lowerBelow, current > 0 {
            let scaled = Double(current) * readsPerSecond / Self.budget
            milliseconds = Self.rounded(max(scaled, Double(current) / 2))
        }
        isSettling = milliseconds != current
        return isSettling
    }

    /// `value` rounded to the nearest 10 ms, within the ceiling; 0 when that is the floor or below.
    private static func rounded(_ value: Double) -> Int {
        let tens = Int((min(value, Double(ceilingMilliseconds)) / 10).rounded(.toNearestOrAwayFromZero))
        return tens * 10 > floorMilliseconds ? tens * 10 : 0
    }
}
