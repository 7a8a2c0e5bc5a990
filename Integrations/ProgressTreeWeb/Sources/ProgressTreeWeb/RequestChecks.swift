/// Who may read the token and send commands (`Docs/WireFormat.md`, "Over HTTP", "Commands";
/// `Docs/WebDashboard.md`, "Behind a reverse proxy"): pure checks of a request's headers, kept apart from
/// the routes so that each rule reads as one function.
///
/// The rules, for `/token` and `/commands`:
/// - A request with an `Origin` (a browser's page) is taken when that origin is one of the allowed origins
///   (the page's address behind a proxy), or when `Host` is trusted and the origin is `http://` or
///   `https://` and that very `Host` (the server's own page, directly or through a TLS-terminating proxy
///   that passes `Host` on). Any other origin, `null` included, is refused: another site's page, and a
///   page of another site whose name was rebound to this machine (DNS rebinding), which sends its own name.
/// - A request without an `Origin` (a program, or a browser's same-origin `GET`) is taken when `Host` is
///   trusted: an IP address, `localhost`, or an allowed name.
/// Never "any origin": an allowed origin is a whole `scheme://host[:port]`, checked when it is given.
struct RequestChecks: Sendable {
    /// The names besides IP addresses and `localhost` that `Host` may carry, lowercased.
    let allowedHostNames: Set<String>
    /// The allowed origins, normalized (`Origin.normalized(_:)`).
    let allowedOrigins: Set<String>

    /// Checks of `allowedHostNames` and `allowedOrigins` (`ProgressWebRoutes.Options`).
    ///
    /// - Precondition: every allowed origin is `http://` or `https://`, a host, and at most a port: a
    ///   wildcard, a path or another scheme is a programming error, stopped with a message naming it.
    init(allowedHostNames: [String], allowedOrigins: [String]) {
        self.allowedHostNames = Set(allowedHostNames.map { $0.lowercased() })
        self.allowedOrigins = Set(
            allowedOrigins.map { origin in
                guard let normalized = Self.normalizedOrigin(origin) else {
                    preconditionFailure(
                        "ProgressWebRoutes.Options.allowedOrigins: \"\(origin)\" is not an origin: write "
                            + "scheme://host[:port] as the browser shows the page's address, e.g. "
                            + "\"https://progress.example.com\" (no wildcard, no path)")
                }
                return normalized
            })
    }

    /// Whether a request with these `Host` and `Origin` headers may read the token or send a command.
    func allows(host: String?, origin: String?) -> Bool {
        let hostIsTrusted = isTrustedHost(host)
        guard let origin else { return hostIsTrusted }
        guard let normalized = Self.normalizedOrigin(origin) else { return false }
        if allowedOrigins.contains(normalized) { return true }
        guard hostIsTrusted, let host else { return false }
        let lowered = host.lowercased()
        return normalized == Self.normalizedOrigin("http://" + lowered)
            || normalized == Self.normalizedOrigin("https://" + lowered)
    }

    /// Whether a request's `Host` header names this server in a way no other site can borrow: an IP
    /// address (v4, or v6 in brackets), `localhost`, or an allowed name (case-insensitive), with or
    /// without a port. A page of another site whose name was rebound to this machine's address sends its
    /// own name, and is refused.
    func isTrustedHost(_ host: String?) -> Bool {
        guard let host, let name = Self.hostName(host) else { return false }
        let lowered = name.lowercased()
        if lowered == "localhost" || lowered == "localhost." { return true }
        if Self.isIPv4(lowered) || (lowered.hasPrefix("[") && lowered.hasSuffix("]")) { return true }
        return allowedHostNames.contains(lowered)
    }

    /// `scheme://host[:port]` lowercased, without a default port (80 for http, 443 for https) and without
    /// a trailing slash; `nil` when `origin` is not such an origin (`null`, a wildcard, a path, a user).
    static func normalizedOrigin(_ origin: String) -> String? {
        var text = Substring(origin.lowercased())
        if text.hasSuffix("/") { text = text.dropLast() }
        let scheme: String
        if text.hasPrefix("http://") {
            scheme = "http"
        } else if text.hasPrefix("https://") {
            scheme = "https"
        } else {
            return nil
        }
        let authority = text.dropFirst(scheme.count + 3)
        guard let name = hostName(String(authority)), !name.contains("*") else { return nil }
        var port = authority.dropFirst(name.count)
        if port == (scheme == "http" ? ":80" : ":443") { port = "" }
        return "\(scheme)://\(name)\(port)"
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

    /// 32 hexadecimal digits from the system's random generator: a token, a ticket.
    static func makeSecret() -> String {
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
