/// How long the publishers a process mounts are asked to wait between two walks, decided from the share
/// of one core that the process's streams' thread (`StreamReactor`) used: the reader's side of the
/// wire format's `interval` command (`Docs/WireFormat.md`, "Commands").
///
/// Every publisher writes one line a walk for each node that changed, so a process that mounts many of
/// them reads lines in proportion to their number: a thousand publishers at the default 50 ms send 20,000
/// lines a second. When the thread that reads them spends more than `raiseAbove` of a core over a
/// measuring window, the process asks for walks far enough apart to bring it back to `target` (the time
/// spent is in proportion to the lines, so to the inverse of the interval); when it spends less than
/// `lowerBelow`, it asks for them closer again (at most twice as close a step), down to no request at
/// all. Between the two bounds nothing changes: a steady load gets a steady interval and no commands.
/// The window after a change is not used, as the publishers take the request during it; nor is a window
/// in which streams were added (connecting costs more than reading).
///
/// The bounds are wide because the time a line costs is not quite in proportion: it grows as lines come
/// further apart (each mount's state is colder in the CPU's caches when its next line comes; a thousand
/// publishers asked for 160 ms cost about 8.5% of a core here, not the 7% the proportion predicts), and
/// observers of the mirrored nodes add their signals to the thread's work (about half as much again when
/// each of those thousand nodes is observed). Within the bounds, the interval stays where it is, so that a
/// change still reaches an observer within about 200 ms.
///
/// A pure state machine: it is handed what the thread measured and says what to ask for. It runs on the
/// reactor's thread only.
struct ReadPacing {
    /// The share of one core the streams' thread aims at once it paces.
    static let target = 0.07
    /// Above this share, the interval asked for grows.
    static let raiseAbove = 0.13
    /// Below this share, the interval asked for shrinks.
    static let lowerBelow = 0.05
    /// Publishers' own default interval: asking for this or less asks for nothing.
    static let floorMilliseconds = 50
    /// The longest interval ever asked for: a change still reaches the reader within a second or so.
    static let ceilingMilliseconds = 1000

    /// The interval asked for, in milliseconds; 0 when none is (publishers walk at their own interval).
    private(set) var milliseconds = 0
    /// Whether the last window changed the interval (the next one is not used).
    private var isSettling = false

    /// Takes the share of one core used over the last measuring window (0…1); whether `milliseconds`
    /// changed.
    mutating func update(busyShare: Double) -> Bool {
        guard busyShare.isFinite, busyShare >= 0 else { return false }
        guard !isSettling else {
            isSettling = false
            return false
        }
        let current = milliseconds
        if busyShare > Self.raiseAbove {
            // The lines read are in inverse proportion to the interval, and so is the time spent on them.
            let base = Double(max(current, Self.floorMilliseconds))
            milliseconds = Self.rounded(base * busyShare / Self.target)
        } else if busyShare < Self.lowerBelow, current > 0 {
            let scaled = Double(current) * busyShare / Self.target
            milliseconds = Self.rounded(max(scaled, Double(current) / 2))
        }
        isSettling = milliseconds != current
        return isSettling
    }

    /// `value` rounded up to 10 ms, within the ceiling; 0 when it is the floor or below.
    private static func rounded(_ value: Double) -> Int {
        guard value > Double(floorMilliseconds) else { return 0 }
        let tens = (min(value, Double(ceilingMilliseconds)) / 10).rounded(.up)
        return Int(tens) * 10
    }
}
