/// A slow data source: it answers after `delay`, all rows at once, with no way to tell how far along it
/// is — work of unknown size, the case for an activity indicator.
struct Archive: Sendable {
    struct Customer: Sendable {
        let id: Int
        let name: String
        let city: String
        let plan: String
        let joined: String
    }

    struct Unavailable: Error, CustomStringConvertible {
        var description: String { "the archive is not answering (simulated with --fail)" }
    }

    let delay: Duration
    let fails: Bool

    /// The first `count` customers. Cancellable: `Task.sleep` throws `CancellationError` when the task
    /// running it is cancelled, which `performActivity` does when its node is cancelled.
    func fetchCustomers(count: Int) async throws -> [Customer] {
        try await Task.sleep(for: delay)
        if fails { throw Unavailable() }
        return (0..<count).map(Self.customer)
    }

    private static let firstNames = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Margaret", "Ken"]
    private static let lastNames = [
        "Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Hamilton", "Thompson",
    ]
    private static let cities = [
        "London", "New York", "Manchester", "Rotterdam", "Boston", "Stanford", "Paoli", "Murray Hill",
    ]
    private static let plans = ["Free", "Pro", "Team", "Enterprise"]

    private static func customer(_ index: Int) -> Customer {
        Customer(
            id: 1_001 + index,
            name: firstNames[index % 8] + " " + lastNames[(index * 3 + 1 + index / 8) % 8],
            city: cities[(index * 5 + 2) % 8],
            plan: plans[(index * 7) % 4],
            joined: "20\(10 + index % 15)-\(pad(1 + index * 5 % 12))-\(pad(1 + index * 11 % 28))")
    }

    private static func pad(_ number: Int) -> String {
        number < 10 ? "0\(number)" : "\(number)"
    }
}
