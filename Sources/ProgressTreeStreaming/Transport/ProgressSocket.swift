import ProgressTreePlatform

/// Sockets for publishing and mounting between processes that did not start one another
/// (`Docs/Mounting.md`, "Who may connect"): listening, accepting and connecting, on a Unix-domain socket
/// (this machine, this user) or TCP (loopback unless asked otherwise). `ProgressListener` publishes on
/// them; `ProgressNode.mountConnection` connects. Every descriptor made here is close-on-exec.
///
/// The tree a publisher sends names files, and the commands it takes cancel and pause its work: whoever
/// can connect can read and control it. The defaults let only what the operating system already
/// enforces through: a Unix-domain socket is created with mode 0600 in a directory only its user can
/// write, and a listener there refuses other users; TCP listens on the loopback interface only, unless
/// the caller names another address with `TCPAddress.unprotected(_:)`. For other machines, prefer ssh:
/// `PROGRESSTREE_FD=1,0` on the remote side, or `ssh -L` forwarding to a Unix-domain socket.
public enum ProgressSocket {
    /// Where a TCP socket listens.
    public struct TCPAddress: Sendable, Equatable, CustomStringConvertible {
        /// The numeric address.
        public let host: String

        /// 127.0.0.1: only programs of this machine can connect (of any user: TCP knows no users).
        public static let loopback = TCPAddress(host: "127.0.0.1")

        /// Any other numeric IPv4 or IPv6 address ("0.0.0.0", "10.0.0.7", "::"): whoever can reach it can
        /// read the tree, file names included, and cancel or pause its work; the stream is neither
        /// authenticated nor encrypted. Use it on a network you trust, or not at all: ssh carries a tree
        /// to other machines safely (`Docs/Mounting.md`).
        public static func unprotected(_ host: String) -> TCPAddress { TCPAddress(host: host) }

        /// `host`.
        public var description: String { host }
    }

    /// A TCP socket listening on `address` (loopback by default) and `port` (0: a free port), and the
    /// port it got. Accepting on it never waits (`accept(_:)` waits for one connection).
    public static func listen(port: UInt16 = 0, address: TCPAddress = .loopback) throws(StreamSetupError) -> (
        descriptor: Int32, port: UInt16
    ) {
        let (descriptor, bound) = try StreamSetupError.rethrowing(
            Sockets.listen(host: address.host, port: port, backlog: 64))
        return (descriptor, bound)
    }

    /// A Unix-domain socket listening at `path`, created with mode 0600. The directory of `path` must
    /// belong to this user and let nobody else write in it (`privateSocketPath(named:)` gives such a
    /// path), so that nobody else can put a socket of theirs in its place. A socket left at `path` by a
    /// listener that is gone is replaced.
    ///
    /// - Throws: `StreamSetupError.unsafePath` for a directory others can write in, or one of another user.
    public static func listen(path: String) throws(StreamSetupError) -> Int32 {
        try StreamSetupError.rethrowing(Sockets.listen(path: path, backlog: 64))
    }

    /// A path for a Unix-domain socket named `name` (`"build.sock"`) in a directory only this user can
    /// enter: `$XDG_RUNTIME_DIR`, or `progresstree-<uid>` in `$TMPDIR` (or /tmp), created with mode 0700.
    public static func privateSocketPath(named name: String) throws(StreamSetupError) -> String {
        try StreamSetupError.rethrowing(Sockets.privateDirectory()) + "/" + name
    }

    /// Waits for one connection on a listening socket and returns it.
    public static func accept(_ listening: Int32) throws(StreamSetupError) -> Int32 {
        while true {
            if let connection = try StreamSetupError.rethrowing(Sockets.accept(listening)) { return connection }
            _ = Polling.waitReady(listening, milliseconds: -1)
        }
    }

    /// A TCP connection to `host`:`port`.
    public static func connect(host: String, port: UInt16) throws(StreamSetupError) -> Int32 {
        try StreamSetupError.rethrowing(Sockets.connect(host: host, port: port))
    }

    /// A connection to the Unix-domain socket at `path`, which must belong to this user, in a directory
    /// only this user can write.
    public static func connect(path: String) throws(StreamSetupError) -> Int32 {
        try StreamSetupError.rethrowing(Sockets.connect(path: path))
    }

    /// Closes a descriptor made here (shutting a connection down first, so a blocked reader wakes).
    public static func close(_ descriptor: Int32) {
        Sockets.shutdownBoth(descriptor)
        FileDescriptor.close(descriptor)
    }
}
