/// A `ProgressProperty` whose values cross the wire format: published (`ProgressPublisher`, `--progress
/// json`), shown by the plain log, and set on the mirrored nodes of a mount that knows the property.
///
/// Opt in by conforming and naming the property; its `Value` must be `ProgressWireValueConvertible`
/// (`Bool`, `Int`, `Int64`, `Double`, `String`, arrays of those, or a type of your own):
///
/// ```swift
/// enum PhotosSkipped: WireProgressProperty {
///     static let wireName = "photosSkipped"
///     static var defaultValue: Int { 0 }
///     static var defaultSummary: Int { 0 }
///     static func reduce(into summary: inout Int, value: Int) { summary += value }
///     static func merge(_ a: Int, _ b: Int) -> Int { a + b }
/// }
/// ```
///
/// A line carries each node's **own** values (the values set on it with `node[Property.self]`, never a
/// summary) in its `properties` object, keyed by `wireName`: a reader that mirrors the tree sets them on
/// the mirrored nodes, and summarizes them itself (`Docs/WireFormat.md`, "Properties"). A mount sets only
/// the properties it was given (`ProgressMount.Options.properties`); it ignores other names.
///
/// Properties that do not conform to this protocol stay in their process: they are not written.
///
/// `Sendable` so that a mount's options can list the type (a type with no cases is).
public protocol WireProgressProperty: ProgressProperty, Sendable where Value: ProgressWireValueConvertible {
    /// The property's key in a line's `properties` object: stable across versions of your program, unique
    /// among the properties of the programs that read each other (a reverse-DNS prefix keeps it so:
    /// `"com.example.photosSkipped"`), and not empty (a property with an empty name is not written).
    /// Renaming it is a change of the wire format between your programs.
    static var wireName: String { get }
}
