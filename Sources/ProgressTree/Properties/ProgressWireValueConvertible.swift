/// A type whose values cross the wire format as `ProgressWireValue`s: the `Value` of a
/// `WireProgressProperty`.
///
/// `Bool`, `Int`, `Int64`, `Double`, `String` and arrays of such types conform. Conform a type of your own
/// (an enum with a `String` raw value, say) by saying how it is spelled and read back:
///
/// ```swift
/// extension Quality: ProgressWireValueConvertible {
///     var progressWireValue: ProgressWireValue? { .string(rawValue) }
///     init?(progressWireValue: ProgressWireValue) {
///         guard case .string(let text) = progressWireValue else { return nil }
///         self.init(rawValue: text)
///     }
/// }
/// ```
///
/// Both run when a writer reads a node or a mount applies a line (never under a lock of the tree): keep them
/// pure and quick.
public protocol ProgressWireValueConvertible {
    /// The value on the wire; `nil`, or a value that is not `ProgressWireValue.isCrossable`, when this value
    /// cannot cross (a writer then leaves it out of the line and counts it).
    var progressWireValue: ProgressWireValue? { get }
    /// The value a line carries, read back; `nil` when it is not one of this type (a mount then leaves the
    /// node's value as it was and counts it in `ProgressMount.Diagnostics.skippedProperties`).
    init?(progressWireValue: ProgressWireValue)
}

extension Bool: ProgressWireValueConvertible {
    /// `.bool`.
    public var progressWireValue: ProgressWireValue? { .bool(self) }
    /// From `.bool` only.
    public init?(progressWireValue: ProgressWireValue) {
        guard case .bool(let value) = progressWireValue else { return nil }
        self = value
    }
}

extension Int64: ProgressWireValueConvertible {
    /// `.integer`; not crossable beyond ±`ProgressWireValue.maximumInteger`.
    public var progressWireValue: ProgressWireValue? { .integer(self) }
    /// From `.integer` only (a number with a fraction is no integer).
    public init?(progressWireValue: ProgressWireValue) {
        guard case .integer(let value) = progressWireValue else { return nil }
        self = value
    }
}

extension Int: ProgressWireValueConvertible {
    /// `.integer`; not crossable beyond ±`ProgressWireValue.maximumInteger`.
    public var progressWireValue: ProgressWireValue? { .integer(Int64(self)) }
    /// From an `.integer` that fits `Int`.
    public init?(progressWireValue: ProgressWireValue) {
        guard case .integer(let value) = progressWireValue, let small = Int(exactly: value) else { return nil }
        self = small
    }
}

extension Double: ProgressWireValueConvertible {
    /// `.number`; not crossable when not finite.
    public var progressWireValue: ProgressWireValue? { .number(self) }
    /// From `.number`, or from an `.integer` (a writer may spell a whole number without a fraction).
    public init?(progressWireValue: ProgressWireValue) {
        switch progressWireValue {
        case .number(let value): self = value
        case .integer(let value): self = Double(value)
        default: return nil
        }
    }
}

extension String: ProgressWireValueConvertible {
    /// `.string`.
    public var progressWireValue: ProgressWireValue? { .string(self) }
    /// From `.string` only.
    public init?(progressWireValue: ProgressWireValue) {
        guard case .string(let value) = progressWireValue else { return nil }
        self = value
    }
}

extension Array: ProgressWireValueConvertible where Element: ProgressWireValueConvertible {
    /// `.array` of the elements' values; `nil` when one of them cannot cross.
    public var progressWireValue: ProgressWireValue? {
        let values = compactMap(\.progressWireValue)
        return values.count == count ? .array(values) : nil
    }
    /// From an `.array` whose every element reads as an `Element`.
    public init?(progressWireValue: ProgressWireValue) {
        guard case .array(let values) = progressWireValue else { return nil }
        let elements = values.compactMap(Element.init(progressWireValue:))
        guard elements.count == values.count else { return nil }
        self = elements
    }
}
