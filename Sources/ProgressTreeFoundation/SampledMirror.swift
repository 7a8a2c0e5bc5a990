/// Something `ProgressSampler` reads on its queue and writes into a node: an adopted `Foundation.Progress`
/// (`AdoptedProgress`) or an adopted `URLSessionTask` (`AdoptedTask`).
protocol SampledMirror: AnyObject, Sendable {
    /// Reads the source and brings the node up to date; `false` once the mirror has ended (the sampler
    /// then forgets it). Runs on the sampler's queue only, or on the adopting thread before the sampler
    /// knows the mirror: never twice at once.
    func sample() -> Bool

    /// Whether the mirror needs the sampler's timer on every platform: a task has no change notification
    /// anywhere, where a Progress is observed by key-value observation on Apple platforms.
    var needsTicksEverywhere: Bool { get }
}
