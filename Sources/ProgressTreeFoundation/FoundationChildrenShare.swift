import Foundation

/// The hidden child of a `FollowingProgress` that stands for its node's partial work in children, so
/// that Foundation's `fractionCompleted` (and a Foundation parent) include it. Foundation does not list a
/// Progress's children, so nobody sees it; it never finishes (that would credit its share as done).
///
/// It is added with the node's total at the time as its pending count, and counts the share in
/// 1/1,048,576 of that; if the total grows past that weight, the share is clipped to it.
struct FoundationChildrenShare {
    static let unitsPerWeight: Int64 = 1 << 20

    private var progress: Progress?
    private var weight: Int64 = 0

    /// Makes the share `share` units of a parent whose total is `total`; `addChild` adds the hidden child
    /// to the parent the first time the share is above 0.
    mutating func update(_ share: Double, total: Int64, addChild: (Progress, Int64) -> Void) {
        if progress == nil {
            guard share > 0, total > 0 else { return }
            let child = Progress(parent: nil, userInfo: nil)
            child.totalUnitCount = Self.unitsPerWeight
            weight = total
            progress = child
            addChild(child, total)
        }
        guard let progress else { return }
        let units = share / Double(weight) * Double(Self.unitsPerWeight)
        let completed = min(max(Int64(units.rounded()), 0), Self.unitsPerWeight - 1)
        if progress.completedUnitCount != completed { progress.completedUnitCount = completed }
    }
}
