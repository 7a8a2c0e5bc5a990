/// A small, deterministic pseudo-random generator (SplitMix64), so that a seed names one sequence of
/// operations on every platform and every run. Not for anything but tests.
package struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `0..<bound` (`bound > 0`).
    package mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// A value in `range`.
    package mutating func value(in range: ClosedRange<Int64>) -> Int64 {
        range.lowerBound + Int64(below(Int(range.upperBound - range.lowerBound) + 1))
    }

    /// One element of `elements` (not empty).
    package mutating func element<T>(of elements: [T]) -> T { elements[below(elements.count)] }

    /// `elements` in a random order (Fisher–Yates).
    package mutating func shuffled<T>(_ elements: [T]) -> [T] {
        var result = elements
        for index in result.indices.reversed() where index > 0 {
            result.swapAt(index, below(index + 1))
        }
        return result
    }
}
