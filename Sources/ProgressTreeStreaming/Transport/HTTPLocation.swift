/// Where a tree is served over HTTP: the host, port and path of an `http://` URL
/// (`ProgressNode.mountConnection(url:…)`), and the paths of the server's other resources beside it.
struct HTTPLocation: Equatable {
    /// The URL as given.
    let url: String
    /// A name or address; an IPv6 address without its brackets.
    let host: String
    /// The port, 80 when the URL names none.
    let port: UInt16
    /// The path and query of the request line ("/events"), "/" when the URL has none.
    let path: String

    /// Reads `url`: `http://host[:port][/path][?query]`. Refused: another scheme (https among them: this
    /// module has no TLS), credentials, a port out of range, and any space or control character (which
    /// could split the request).
    init(parsing url: String) throws(ProgressMount.UnsupportedURL) {
        self.url = url
        guard !url.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            throw ProgressMount.UnsupportedURL(url: url, reason: "a URL with spaces or control characters")
        }
        let lowered = url.lowercased()
        if lowered.hasPrefix("https://") {
            throw ProgressMount.UnsupportedURL(
                url: url,
                reason:
                    "https is not supported by ProgressTreeStreaming, which has no TLS: reach the server through a "
                    + "TLS-terminating tunnel (stunnel, ssh -L, a local reverse proxy) and mount its http:// URL")
        }
        guard lowered.hasPrefix("http://") else {
            throw ProgressMount.UnsupportedURL(url: url, reason: "not an http:// URL")
        }
        var rest = url.dropFirst("http://".count)
        if let fragment = rest.firstIndex(of: "#") { rest = rest[..<fragment] }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var path = String(rest[authorityEnd...])
        if path.isEmpty || path.first == "?" { path = "/" + path }
        guard !authority.contains("@") else {
            throw ProgressMount.UnsupportedURL(url: url, reason: "credentials in the URL are not supported")
        }
        var host: Substring
        var portText: Substring?
        if authority.first == "[" {
            guard let close = authority.firstIndex(of: "]") else {
                throw ProgressMount.UnsupportedURL(url: url, reason: "an IPv6 address without its closing bracket")
            }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":" else {
                    throw ProgressMount.UnsupportedURL(url: url, reason: "no host and port")
                }
                portText = after.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { throw ProgressMount.UnsupportedURL(url: url, reason: "no host") }
        var port: UInt16 = 80
        if let portText, !portText.isEmpty {
            guard portText.allSatisfy(\.isASCIIDigit), let number = UInt16(portText), number > 0 else {
                throw ProgressMount.UnsupportedURL(url: url, reason: "the port is not a number from 1 to 65535")
            }
            port = number
        }
        self.host = String(host)
        self.port = port
        self.path = path
    }

    /// The `Host` header's value: "host:port", an IPv6 address in brackets.
    var hostField: String {
        (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
    }

    /// The path of the resource `name` beside this one: the last component of the path replaced, the
    /// query dropped ("/jobs/7/events?x=1" → "/jobs/7/commands").
    func sibling(_ name: String) -> String {
        let pathOnly = path.prefix { $0 != "?" }
        let directory = pathOnly[...(pathOnly.lastIndex(of: "/") ?? pathOnly.startIndex)]
        return (directory.hasPrefix("/") ? String(directory) : "/") + name
    }

    /// The URL of the resource `name` beside this one, for messages.
    func siblingURL(_ name: String) -> String {
        "http://\(hostField)\(sibling(name))"
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
