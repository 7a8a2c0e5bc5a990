/// Who may read the token and send commands (`Docs/WireFormat.md`, "Over HTTP", "Commands"): pure checks of
/// a request's headers, kept apart from the routes so that each rule reads as one function.
enum RequestChecks {
    /// Whether a request's `Host` header names this server in a way no other site can borrow: an IP
    /// address (v4, or v6 in brackets), `localhost`, or one of `allowedNames` (case-insensitive), with or
    /// without a port. A page of another site whose name was rebound to this machine's address sends its
    /// own name, and is refused.
    static func isTrustedHost(_ host: String?, allowedNames: [String]) -> Bool {
        guard let host, let name = hostName(host) else { return false }
        let lowered = name.lowercased()
        if lowered == "localhost" || lowered == "localhost." { return true }
        if isIPv4(lowered) || (lowered.hasPrefix("[") && lowered.hasSuffix("]")) { return true }
        return allowedNames.contains { $0.lowercased() == lowered }
    }

    /// Whether a command's `Origin` header is this server's own origin or absent (a program, not a page):
    /// `http://` and the request's `Host`. Any other value, `null` included, names another origin.
    static func isSameOrigin(_ origin: String?, host: String?) -> Bool {
        guard let origin else { return true }
        guard let host else { return false }
        return origin.lowercased() == "http://" + host.lowercased()
    }

    /// Compares a presented token with the server's in time that does not depend on where they differ.
    static func tokenMatches(_ presented: String?, _ token: String) -> Bool {
        guard let presented else { return false }
        let a = Array(presented.utf8)
        let b = Array(token.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    /// A new token: 32 hexadecimal digits from the system's random generator.
    static func makeToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let text = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }.joined()
    }

    /// The name in a `Host` value, without its port; `nil` when the value is malformed.
    private static func hostName(_ host: String) -> Substring? {
        let value = host.drop { $0 == " " }
        guard !value.isEmpty, !value.contains(where: { $0 == "/" || $0 == "@" || $0 == " " }) else { return nil }
        if value.hasPrefix("[") {
            guard let close = value.firstIndex(of: "]") else { return nil }
            let rest = value[value.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && rest.dropFirst().allSatisfy(\.isNumber)) else { return nil }
            return value[...close]
        }
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, !parts[0].isEmpty else { return nil }
        if parts.count == 2, parts[1].isEmpty || !parts[1].allSatisfy(\.isNumber) { return nil }
        return parts[0]
    }

    private static func isIPv4(_ name: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { part in
                !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isASCII) && part.allSatisfy(\.isNumber)
                    && (Int(part) ?? 256) <= 255
            }
    }
}
