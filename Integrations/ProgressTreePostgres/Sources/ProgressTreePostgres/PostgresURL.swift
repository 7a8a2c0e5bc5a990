/// Reads `postgres://user[:password]@host[:port][/database]` (or `postgresql://`) into a server; `nil` for
/// anything else. `%`-escapes are decoded in the user, the password and the database; an IPv6 host is
/// written in brackets.
func parsePostgresURL(_ url: String) -> ProgressJobStore.Server? {
    var rest = Substring(url)
    if rest.hasPrefix("postgres://") {
        rest = rest.dropFirst("postgres://".count)
    } else if rest.hasPrefix("postgresql://") {
        rest = rest.dropFirst("postgresql://".count)
    } else {
        return nil
    }
    guard !rest.contains("?"), !rest.contains("#"), let at = rest.lastIndex(of: "@") else { return nil }
    let userInfo = rest[..<at]
    var hostPart = rest[rest.index(after: at)...]
    var database: String?
    if let slash = hostPart.firstIndex(of: "/") {
        let name = hostPart[hostPart.index(after: slash)...]
        if !name.isEmpty {
            guard let decoded = percentDecoded(name), !decoded.contains("/") else { return nil }
            database = decoded
        }
        hostPart = hostPart[..<slash]
    }
    let userParts = userInfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
    guard let user = userParts.first.flatMap(percentDecoded), !user.isEmpty else { return nil }
    let password = userParts.count > 1 ? percentDecoded(userParts[1]) : nil
    if userParts.count > 1, password == nil { return nil }
    var host = hostPart
    var port = 5432
    if host.hasPrefix("[") {
        guard let close = host.firstIndex(of: "]") else { return nil }
        let after = host[host.index(after: close)...]
        host = host[host.index(after: host.startIndex)..<close]
        if !after.isEmpty {
            guard after.first == ":", let number = Int(after.dropFirst()), (1...65535).contains(number) else {
                return nil
            }
            port = number
        }
    } else if let colon = host.lastIndex(of: ":") {
        guard let number = Int(host[host.index(after: colon)...]), (1...65535).contains(number) else { return nil }
        port = number
        host = host[..<colon]
    }
    guard !host.isEmpty, host.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") }) else { return nil }
    return ProgressJobStore.Server(
        host: String(host), port: port, username: user, password: password, database: database)
}

/// `text` with its `%XX` escapes decoded; `nil` when an escape is not two hexadecimal digits or the bytes
/// are not UTF-8.
private func percentDecoded(_ text: Substring) -> String? {
    var bytes: [UInt8] = []
    var iterator = text.utf8.makeIterator()
    while let byte = iterator.next() {
        guard byte == UInt8(ascii: "%") else {
            bytes.append(byte)
            continue
        }
        guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
            return nil
        }
        bytes.append(high << 4 | low)
    }
    return String(validating: bytes, as: UTF8.self)
}

private func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case 0x30...0x39: byte - 0x30
    case 0x41...0x46: byte - 0x41 + 10
    case 0x61...0x66: byte - 0x61 + 10
    default: nil
    }
}
