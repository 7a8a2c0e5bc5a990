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
    /// address (v4, or a valid v6 literal in brackets), `localhost`, or an allowed name (case-insensitive),
    /// with or without a port. A page of another site whose name was rebound to this machine's address sends
    /// its own name, and is refused; so is a malformed value (`[evil]`, a port of other than ASCII digits).
    func isTrustedHost(_ host: String?) -> Bool {
        guard let host, let (name, _) = Self.hostAndPort(Substring(host)) else { return false }
        let lowered = name.lowercased()
        if lowered == "localhost" || lowered == "localhost." { return true }
        if Self.isIPv4(lowered[...]) || lowered.hasPrefix("[") { return true }  // brackets: checked as IPv6
        return allowedHostNames.contains(lowered)
    }

    /// `scheme://host[:port]` lowercased, without a default port (80 for http, 443 for https) and without
    /// a trailing slash; `nil` when `origin` is not such an origin (`null`, a wildcard, a path, a user, a
    /// space, a bracketed host that is not an IPv6 address, a port that is not 1 to 5 ASCII digits up to
    /// 65535). `ProgressWebRoutes.Options.normalizedOrigin(_:)` is this function.
    static func normalizedOrigin(_ origin: String) -> String? {
        // An origin is ASCII without spaces or control characters (a browser sends a name in punycode).
        guard origin.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
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
        guard let (name, port) = hostAndPort(text.dropFirst(scheme.count + 3)), !name.contains("*") else {
            return nil
        }
        let shown = port.map { $0 == (scheme == "http" ? 80 : 443) ? "" : ":\($0)" } ?? ""
        return "\(scheme)://\(name)\(shown)"
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

    /// The name and the port of a `Host` value or an origin's authority (`name`, `name:port`,
    /// `[IPv6]:port`); `nil` when it is malformed: empty, a character outside a host name's (a user's `@`, a
    /// path, a space), brackets around what is not an IPv6 address, or a port other than 1 to 5 ASCII
    /// digits up to 65535 (`:` alone included).
    static func hostAndPort(_ value: Substring) -> (name: Substring, port: Int?)? {
        let name: Substring
        let rest: Substring
        if value.hasPrefix("[") {
            guard let close = value.firstIndex(of: "]"),
                isIPv6(value[value.index(after: value.startIndex)..<close])
            else { return nil }
            name = value[...close]
            rest = value[value.index(after: close)...]
        } else {
            let colon = value.firstIndex(of: ":") ?? value.endIndex
            name = value[..<colon]
            rest = value[colon...]
            guard !name.isEmpty, name.utf8.allSatisfy(isHostNameByte) else { return nil }
        }
        guard rest.first == ":" else { return rest.isEmpty ? (name, nil) : nil }
        let digits = rest.dropFirst()
        guard (1...5).contains(digits.utf8.count), digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let port = Int(digits), port <= 65535
        else { return nil }
        return (name, port)
    }

    /// Whether `byte` may be part of a host name or an IPv4 address: an ASCII letter, digit, `-`, `.` or
    /// `_`, or `*` (which an origin refuses with its own message).
    private static func isHostNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "*"):
            true
        default: false
        }
    }

    /// Whether `text` is an IPv4 address in dotted-decimal form: four numbers of ASCII digits up to 255.
    static func isIPv4(_ text: Substring) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { part in
                (1...3).contains(part.utf8.count) && part.utf8.allSatisfy { (0x30...0x39).contains($0) }
                    && (Int(part) ?? 256) <= 255
            }
    }

    /// Whether `text` is an IPv6 address as RFC 4291 writes it (the text between a URL's brackets): eight
    /// groups of 1 to 4 hexadecimal digits, or fewer with one `::`, the last two groups possibly an IPv4
    /// address. No zone (`%eth0`): a browser sends none.
    static func isIPv6(_ text: Substring) -> Bool {
        var rest = text
        var tailGroups = 0
        if let lastColon = rest.lastIndex(of: ":"), rest[lastColon...].contains(".") {
            guard isIPv4(rest[rest.index(after: lastColon)...]) else { return false }
            rest = rest[...lastColon]
            // "…:1.2.3.4" leaves "…:", a separator; "::1.2.3.4" leaves "::", the compression.
            if !rest.hasSuffix("::") { rest = rest.dropLast() }
            tailGroups = 2
        }
        /// How many groups `part` holds ("" holds none); `nil` when one is not 1 to 4 hexadecimal digits.
        func groups(_ part: Substring) -> Int? {
            guard !part.isEmpty else { return 0 }
            let groups = part.split(separator: ":", omittingEmptySubsequences: false)
            for group in groups {
                guard (1...4).contains(group.utf8.count), group.utf8.allSatisfy(isHexDigit) else { return nil }
            }
            return groups.count
        }
        guard let compression = rest.firstRange(of: "::") else {
            return groups(rest).map { $0 + tailGroups == 8 } ?? false
        }
        guard let before = groups(rest[..<compression.lowerBound]),
            let after = groups(rest[compression.upperBound...])
        else { return false }
        return before + after + tailGroups <= 7
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }
}
