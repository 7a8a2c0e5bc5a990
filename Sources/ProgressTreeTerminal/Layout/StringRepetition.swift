extension String {
    /// `unit` written `count` times (none when `count` ≤ 0): what `String(repeating:count:)` gives, built by
    /// copying the unit's UTF-8 bytes into one allocation. The standard library's version appends the
    /// unit one copy at a time, about four times slower for a bar's 20–40 cells; a live frame draws a few
    /// such runs on each of its rows (bars, indentation, padding).
    static func repeated(_ unit: String, count: Int) -> String {
        guard count > 0, !unit.isEmpty else { return "" }
        var unit = unit
        return unit.withUTF8 { bytes in
            String(unsafeUninitializedCapacity: bytes.count * count) { buffer in
                // `buffer` holds `bytes.count * count` bytes: each copy fills the next `bytes.count` of them.
                var offset = 0
                for _ in 0..<count {
                    for byte in bytes {
                        buffer[offset] = byte
                        offset += 1
                    }
                }
                return offset
            }
        }
    }
}
