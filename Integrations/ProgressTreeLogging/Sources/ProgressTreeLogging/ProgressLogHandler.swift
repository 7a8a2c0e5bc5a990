import Logging
import ProgressTree
import ProgressTreeTerminal

/// A swift-log `LogHandler` that prints each record above a `TerminalRenderer`'s live area, so that log
/// lines and progress bars never tear each other.
///
/// ```swift
/// let renderer = TerminalRenderer(album)
/// LoggingSystem.bootstrap { ProgressLogHandler(label: $0, renderer: renderer) }
/// let logger = Logger(label: "photo-import")
/// logger.warning("skipped IMG_0004.jpg (duplicate)", metadata: ["photo": "IMG_0004.jpg"])
/// // warning photo-import: skipped IMG_0004.jpg (duplicate) [photo=IMG_0004.jpg]
/// ```
///
/// A record is one line: its level, the logger's label and a colon, the message, then its metadata in
/// brackets, each `key=value`, sorted by key and separated by spaces (omitted when there is none; a list
/// value reads `[a, b]`, a dictionary `[k: v]` sorted by key). The
/// metadata is the handler's, then the metadata provider's, then the record's own (a later one wins for
/// the same key), plus `error=…` when the record carries an error, and `progress=…` when
/// `progressNode` names a node: its path in its tree (`ProgressNode.labelPath`), "Import › IMG_0004.jpg",
/// as a plain-mode line names it. No time stamp: the line goes to a terminal or a log next to the
/// progress lines, which have none. A message with line breaks is printed as several lines, the first
/// with the level and label, the metadata after the last.
///
/// Every part is made printable as the renderer's messages are (`TerminalText.printable(_:)`): control
/// characters (escape sequences, tabs, line breaks inside metadata) are shown as spaces, so a record can
/// never move the cursor or break the live area. In the message, a line break (a carriage return too)
/// starts a new line, as in `TerminalRenderer.print(_:)`.
///
/// Records below `logLevel` are dropped by the handler itself, also when it is called directly or
/// through a handler that does not check levels. Where records go (the renderer, or standard error in
/// json mode, before a renderer exists and so on) is the console's rule: see `ProgressLogConsole`.
public struct ProgressLogHandler: LogHandler {
    /// Which node's path a record carries as `progress=…` metadata.
    public enum ProgressNodeSource: Sendable {
        /// None: records carry no `progress` metadata.
        case none
        /// The node of the work where the record is logged (`ProgressNode.currentWork()`: made current on
        /// the thread, bound to the task with `withCurrent`, or whose linked task runs the code,
        /// `withCancellationLink` and `task(priority:operation:)`; the innermost), when there is one.
        case current
        /// This node, whatever the code that logs.
        case node(ProgressNode)
    }

    /// The label of the loggers this handler serves, printed after the level.
    public let label: String
    /// Where records go.
    public let console: ProgressLogConsole
    /// Records below this level are dropped. `info` by default, as swift-log's own handlers.
    public var logLevel: Logger.Level = .info
    /// Metadata added to every record of this handler.
    public var metadata: Logger.Metadata = [:]
    /// Metadata read at each record and added to it.
    public var metadataProvider: Logger.MetadataProvider?
    /// Which node's path records carry as `progress=…`; `none` by default.
    public var progressNode: ProgressNodeSource = .none

    /// A handler for loggers labelled `label` that prints through `console`: share one console between
    /// the handlers of `LoggingSystem.bootstrap` and attach the renderer to it when it exists.
    public init(
        label: String, console: ProgressLogConsole, metadataProvider: Logger.MetadataProvider? = nil
    ) {
        self.label = label
        self.console = console
        self.metadataProvider = metadataProvider
    }

    /// A handler for loggers labelled `label` that prints through `renderer` (and to standard error in
    /// its json and none modes): for a program whose renderer exists before its loggers.
    public init(label: String, renderer: TerminalRenderer, metadataProvider: Logger.MetadataProvider? = nil) {
        self.init(label: label, console: ProgressLogConsole(renderer: renderer), metadataProvider: metadataProvider)
    }

    /// The metadata value of `key` for this handler's records.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Prints the record, unless its level is below `logLevel`.
    public func log(event: LogEvent) {
        guard event.level >= logLevel else { return }
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let own = event.metadata { merged.merge(own) { $1 } }
        if let error = event.error { merged["error"] = "\(error)" }
        if let node = progressNodeToShow() { merged["progress"] = .string(Self.progressText(of: node)) }
        console.write(Self.lines(level: event.level, label: label, message: "\(event.message)", metadata: merged))
    }

    /// The node's path in its tree, as a plain-mode line names it ("Import › IMG_0004.jpg"), or its
    /// description when neither it nor an ancestor has a label.
    static func progressText(of node: ProgressNode) -> String {
        let path = node.labelPath
        return path.isEmpty ? node.localizedDescription : path.joined(separator: " › ")
    }

    private func progressNodeToShow() -> ProgressNode? {
        switch progressNode {
        case .none: nil
        case .current: ProgressNode.currentWork()
        case .node(let node): node
        }
    }

    /// The printable lines of one record, as the type's documentation describes them.
    static func lines(level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) -> [String] {
        var lines = message.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
            .map { TerminalText.printable(String($0)) }
        if lines.count > 1, lines.last?.isEmpty == true { lines.removeLast() }
        let prefix = label.isEmpty ? "\(level.rawValue): " : "\(level.rawValue) \(TerminalText.printable(label)): "
        lines[0] = prefix + lines[0]
        if !metadata.isEmpty {
            let pairs = metadata.sorted { $0.key < $1.key }.map {
                TerminalText.printable($0.key) + "=" + TerminalText.printable(text(of: $0.value))
            }
            lines[lines.count - 1] += " [" + pairs.joined(separator: " ") + "]"
        }
        return lines
    }

    /// A metadata value as text: a string as it is, a list as `[a, b]`, a dictionary as `[k: v]` sorted by
    /// key (so that a record always reads the same), anything else as its description.
    static func text(of value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let string): string
        case .stringConvertible(let convertible): convertible.description
        case .array(let values): "[" + values.map(text(of:)).joined(separator: ", ") + "]"
        case .dictionary(let pairs):
            "[" + pairs.sorted { $0.key < $1.key }.map { $0.key + ": " + text(of: $0.value) }.joined(separator: ", ")
                + "]"
        }
    }
}
