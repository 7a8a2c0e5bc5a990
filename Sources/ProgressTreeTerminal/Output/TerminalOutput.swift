import ProgressTreePlatform

/// The size of a terminal in character cells.
public struct TerminalSize: Sendable, Equatable {
    /// Character cells per line.
    public var columns: Int
    /// Lines.
    public var rows: Int

    /// A size of `columns` × `rows` cells.
    public init(columns: Int, rows: Int) {
        self.columns = columns
        self.rows = rows
    }
}

/// Where a renderer writes, and what it knows about it.
///
/// The renderer writes each frame with one `write(_:)` call. Implementations must be safe to call from any
/// thread; the renderer never calls `write` from two threads at once.
public protocol TerminalOutput: Sendable {
    /// Writes `text` completely.
    func write(_ text: String)
    /// Whether the output is an interactive terminal (decides `auto` mode).
    var isTerminal: Bool { get }
    /// The current size, or `nil` when unknown (not a terminal).
    func size() -> TerminalSize?
    /// The file descriptor to restore the cursor on from a signal handler, if any.
    var fileDescriptor: Int32? { get }
}

/// A terminal output on a file descriptor: standard error (the default of renderers) or standard output.
public struct FileDescriptorOutput: TerminalOutput {
    /// The file descriptor written to.
    public let descriptor: Int32

    /// An output on `descriptor` (not closed by the output).
    public init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Standard error, where progress goes by default so that standard output stays clean for results.
    public static let standardError = FileDescriptorOutput(descriptor: 2)
    /// Standard output, for programs whose progress is their output.
    public static let standardOutput = FileDescriptorOutput(descriptor: 1)

    /// Writes all of `text` with `write(2)`, retrying on `EINTR` and partial writes; drops the rest if the
    /// reader went away.
    public func write(_ text: String) {
        var text = text
        _ = text.withUTF8 { buffer in FileDescriptor.writeAll(descriptor, UnsafeRawBufferPointer(buffer)) }
    }

    /// `isatty(2)` of the descriptor.
    public var isTerminal: Bool { TerminalDevice.isTerminal(descriptor) }

    /// The window size from `ioctl(TIOCGWINSZ)`, or `nil` when the descriptor is not a terminal.
    public func size() -> TerminalSize? {
        TerminalDevice.windowSize(descriptor).map { TerminalSize(columns: $0.columns, rows: $0.rows) }
    }

    /// The descriptor, for the signal handler that restores the cursor.
    public var fileDescriptor: Int32? { descriptor }
}
