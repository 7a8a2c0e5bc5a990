import ProgressTree

/// A mount's memory of the last line it read, so that the next line is read only where it differs.
///
/// A publisher's node writes a line each time it changes, and from one line to the next most of it stays
/// the same byte for byte: the names, the id, the strings; only a few numbers move (`completed`,
/// `fraction`, `throughput`, `timeRemaining`). The memo keeps the last line, the members it held and where
/// each member lies. A new line is compared with it from both ends; the members that hold the bytes that
/// differ are read again, and the others taken from the memo. A thousand mounts each reading one line an
/// interval spend most of their time parsing and in the kernel: this cuts the parsing to the part that moved.
///
/// Invariant (why the result is the record a full read gives): the memo holds a line only if its known
/// fields are named once each and every name is written without escapes. The bytes before the first
/// difference and after the last are the same in both lines, so the members wholly inside them have the
/// same names and values; the members re-read must span exactly the same range of members (the same
/// names, in the same order, ending where the old ones ended, shifted by the change in length), so that
/// the new line has the same members, each named once, and the values of the re-read ones are their own.
/// Whatever does not fit (another shape, escapes, whitespace moved) is read in full.
///
/// Touched by the reactor's thread only (it lives in the mount's reading state, under its lock).
struct WireLineMemo {
    /// The most members a remembered line may have (a line of the format has 25).
    static let maximumMembers = 64

    private var line: [UInt8] = []
    private var members = WireMembers()
    /// Each member of `line`: its span (name's quote to value's end), the length of its name, its field.
    private var spans: [Range<Int>] = []
    private var nameLengths: [Int] = []
    private var fields: [WireField?] = []
    /// The members of the last partial read: their values and spans.
    private var reread: [(value: WireValue, range: Range<Int>)] = []
    /// How many lines were read from where they differed (not in full), for tests.
    private(set) var partialReads = 0

    /// The record of `bytes` (one line, without its newline), read only where it differs from the last one.
    mutating func record(_ bytes: UnsafeRawBufferPointer) throws(ProgressWireError) -> ProgressWireRecord {
        if let record = try recordFromChange(bytes) { return record }
        return try readInFull(bytes)
    }

    /// A full read, remembered when its shape allows.
    private mutating func readInFull(_ bytes: UnsafeRawBufferPointer) throws(ProgressWireError) -> ProgressWireRecord {
        var members = WireMembers()
        var spans: [Range<Int>] = []
        var nameLengths: [Int] = []
        var fields: [WireField?] = []
        var seen: UInt64 = 0
        var remembers = true
        spans.reserveCapacity(32)
        nameLengths.reserveCapacity(32)
        fields.reserveCapacity(32)
        do {
            try WireJSON.forEachMemberWithSpan(of: bytes) { (name, value, span) throws(WireJSON.Failure) in
                let field = WireField(name: name)
                if let field {
                    members[field] = value
                    let bit = UInt64(1) << UInt64(field.rawValue)
                    if seen & bit != 0 { remembers = false }
                    seen |= bit
                }
                guard remembers else { return }
                // A name without escapes is handed where it lies, just after the span's quote.
                let inPlace = bytes.baseAddress.map { $0 + span.lowerBound + 1 }
                if name.baseAddress != inPlace || spans.count >= Self.maximumMembers {
                    remembers = false
                    return
                }
                spans.append(span)
                nameLengths.append(name.count)
                fields.append(field)
            }
        } catch {
            throw .malformed(error.message)
        }
        let record = try ProgressWireRecord(members: members)
        if remembers {
            line.removeAll(keepingCapacity: true)
            line.append(contentsOf: bytes)
            self.members = members
            self.spans = spans
            self.nameLengths = nameLengths
            self.fields = fields
        } else {
            forget()
        }
        return record
    }

    private mutating func forget() {
        line.removeAll(keepingCapacity: true)
        spans.removeAll(keepingCapacity: true)
        nameLengths.removeAll(keepingCapacity: true)
        fields.removeAll(keepingCapacity: true)
    }

    /// The record of `bytes` read from where it differs from the remembered line; `nil` when that does not
    /// apply (nothing remembered, another shape), and the line is then read in full.
    private mutating func recordFromChange(_ bytes: UnsafeRawBufferPointer) throws(ProgressWireError)
        -> ProgressWireRecord?
    {
        guard !spans.isEmpty else { return nil }
        let (prefix, suffix) = line.withUnsafeBytes { old in Self.sameEnds(old, bytes) }
        let newCount = bytes.count
        let oldCount = line.count
        let shift = newCount - oldCount
        // The bytes that differ: old[prefix..<oldCount - suffix], new[prefix..<newCount - suffix].
        let low = prefix
        let high = oldCount - suffix
        // The first member reaching the difference, and the last one starting before its end.
        guard let first = spans.firstIndex(where: { $0.upperBound >= low }), spans[first].lowerBound <= low else {
            return nil
        }
        var last = first
        while last + 1 < spans.count, spans[last + 1].lowerBound < high { last += 1 }
        guard spans[last].upperBound >= high else { return nil }
        // Reading more than half of the line again costs more than reading it whole.
        guard (last - first + 1) * 2 <= spans.count else { return nil }

        let region = spans[first].lowerBound..<(spans[last].upperBound + shift)
        // The members re-read, applied only once all of them fit (kept between lines: no allocation).
        reread.removeAll(keepingCapacity: true)
        var index = first
        var fits = true
        var read = true
        do {
            let old = line  // for the names; let go before `line` is rewritten below
            try WireJSON.forEachMember(of: bytes, in: region) { (name, value, span) in
                guard fits, index <= last, name.count == nameLengths[index] else {
                    fits = false
                    return
                }
                let oldName = spans[index].lowerBound + 1
                guard name.elementsEqual(old[oldName..<(oldName + name.count)]) else {
                    fits = false
                    return
                }
                reread.append((value, span))
                index += 1
            }
        } catch {
            read = false  // read in full, which says what is wrong
        }
        guard read, fits, index == last + 1 else { return nil }
        var changed = members
        for (offset, member) in reread.enumerated() {
            if let field = fields[first + offset] { changed[field] = member.value }
        }
        let record = try ProgressWireRecord(members: changed)
        partialReads += 1
        line.removeAll(keepingCapacity: true)
        line.append(contentsOf: bytes)
        members = changed
        for (offset, member) in reread.enumerated() { spans[first + offset] = member.range }
        if shift != 0 {
            for member in (last + 1)..<spans.count {
                spans[member] = (spans[member].lowerBound + shift)..<(spans[member].upperBound + shift)
            }
        }
        return record
    }

    /// How many bytes `a` and `b` have in common at their start, and then at their end (never counting a
    /// byte twice).
    private static func sameEnds(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> (Int, Int) {
        let shorter = min(a.count, b.count)
        var prefix = 0
        while prefix + 8 <= shorter,
            a.loadUnaligned(fromByteOffset: prefix, as: UInt64.self)
                == b.loadUnaligned(fromByteOffset: prefix, as: UInt64.self)
        {
            prefix += 8
        }
        while prefix < shorter, a[prefix] == b[prefix] { prefix += 1 }
        var suffix = 0
        let room = shorter - prefix
        while suffix + 8 <= room,
            a.loadUnaligned(fromByteOffset: a.count - suffix - 8, as: UInt64.self)
                == b.loadUnaligned(fromByteOffset: b.count - suffix - 8, as: UInt64.self)
        {
            suffix += 8
        }
        while suffix < room, a[a.count - 1 - suffix] == b[b.count - 1 - suffix] { suffix += 1 }
        return (prefix, suffix)
    }
}
