/// The secrets the routes hand out: command tokens (`ProgressWebRoutes.token`), stream tickets and the
/// sessions they are redeemed for (`ProgressStreamTickets`).
enum Secret {
    /// 32 hexadecimal digits (128 bits) from the system's random generator.
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let text = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }.joined()
    }
}
