/// A simulated mailbox that delivers messages in bursts: a handful to a few dozen at once, a few
/// milliseconds apart, then a pause. The same on every run.
struct Feed: Sendable {
    struct Message: Sendable {
        let number: Int
        let sender: String
        let subject: String
    }

    let count: Int
    let speed: Double

    private static let senders = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"]
    private static let subjects = [
        "Lunch on Friday?", "Re: quarterly numbers", "Your order has shipped", "Build failed on main",
        "Photos from the trip", "Re: Re: the plan", "Meeting moved to 3 pm", "Invoice #4471",
        "Welcome aboard!", "Fwd: funny cat video", "Reminder: dentist", "Re: code review",
    ]

    /// Calls `receive` for each message as it arrives; returns when all arrived or `isStopped()` says so.
    /// Returns the number of bursts.
    /// Runs on the caller's actor (`isolation`), so the closures need not be `Sendable`.
    func deliver(
        isolation: isolated (any Actor)? = #isolation, isStopped: () -> Bool, receive: (Message) -> Void
    ) async -> Int {
        var random = SplitMix(seed: 42)
        var number = 0
        var bursts = 0
        while number < count, !isStopped() {
            bursts += 1
            let size = min(count - number, 1 + Int(random.next() % 30))
            for _ in 0..<size {
                guard !isStopped() else { break }
                number += 1
                receive(
                    Message(
                        number: number, sender: Self.senders[Int(random.next() % 8)],
                        subject: Self.subjects[Int(random.next() % 12)]))
                await pause(milliseconds: 5 + Int(random.next() % 15))  // within a burst
            }
            if number < count { await pause(milliseconds: 300 + Int(random.next() % 600)) }  // between bursts
        }
        return bursts
    }

    private func pause(isolation: isolated (any Actor)? = #isolation, milliseconds: Int) async {
        try? await Task.sleep(for: .microseconds(Int(Double(milliseconds * 1000) / speed)))
    }
}

/// A small deterministic random number generator (SplitMix64).
struct SplitMix {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
