#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import ProgressTree
import ProgressTreePlatform
import Synchronization

extension ProgressNode {
    /// Mounts the wire-format stream read from `fileDescriptor` as a child of this node standing for
    /// `pendingUnitCount` of its units, and sends commands to `commandDescriptor` (the same descriptor for
    /// a socket; `nil`: no control channel). The mount owns the descriptors from now on and closes them
    /// when the stream ends (so the publisher sees its reader go away).
    ///
    /// - Parameters:
    ///   - fileDescriptor: the stream to read, open for reading; owned by the mount from now on.
    ///   - commandDescriptor: where commands are written, open for writing (for a socket, the same
    ///     descriptor as `fileDescriptor`); `nil` when the publisher reads no commands.
    ///   - pendingUnitCount: the share of this node's units the mounted tree stands for.
    ///   - name: shown with the stream's root's description ("build host: Importing 3 photos"), or
    ///     alone until the root sets one, and in failure reasons ("build host stopped before the end").
    ///   - options: limits of the mount (see `ProgressMount.Options`).
    /// - Returns: the mount; its `node` is the mirrored root, already attached to this node.
    /// - Complexity: O(1); the stream is read on the thread that reads every mount (`ProgressMount`).
    public func mount(
        fileDescriptor: Int32, commandDescriptor: Int32? = nil, pendingUnitCount: Int64, name: String,
        options: ProgressMount.Options = ProgressMount.Options()
    ) -> ProgressMount {
        if commandDescriptor != nil { Signals.ignoreBrokenPipe() }
        let mount = ProgressMount(
            parent: self, pendingUnitCount: pendingUnitCount, name: name, input: fileDescriptor,
            commands: commandDescriptor, options: options)
        mount.start()
        return mount
    }

    /// Starts the program at `path` with `arguments` and mounts the tree it publishes as a child of this
    /// node standing for `pendingUnitCount` of its units.
    ///
    /// The program gets one end of a socket pair as descriptor 3, named by `PROGRESSTREE_FD=3` in its
    /// environment (the way make hands on its jobserver): its `TerminalRenderer` (or
    /// `ProgressPublisher.inherited(for:)`) publishes there instead of drawing, and reads commands from
    /// it. Its standard input is /dev/null. Its standard output and error are read line by line and each
    /// line is handed to `outputLines` (`TerminalRenderer.print` shows them above its live area, prefixed
    /// with `name`); by default each line goes, whole, to this process's standard output or error. Lines
    /// of several programs never mix within a line, and every line is handed over before the mount ends.
    ///
    /// If the program exits with a status other than 0, is killed, or stops before its root is final, the
    /// mirrored node fails with the reason ("worker 2 exited with signal 9"). On Linux the program gets
    /// `SIGTERM` when this process ends, however it ends (`kill -9` included): a worker does not outlive
    /// the program that mounted it. (Programs built with ProgressTree also stop when their reader goes
    /// away: see `ProgressPublisher.Options.cancelsRootWhenDisconnected`.)
    ///
    /// The program leads a process group of its own, so what it starts ends with it: a watcher process
    /// sends the group `SIGTERM`, then `SIGKILL` a second later, when the program exits, 0.5 s after the
    /// mount is cancelled from this side (or closed) if the cancel command has not ended it, and when this
    /// process ends, however it ends (`Docs/Mounting.md`, "The program's whole tree"). A descendant that
    /// leaves the group (`setsid`) is not reached.
    ///
    /// - Parameters:
    ///   - path: the program to start: a path, not looked up in `PATH`.
    ///   - arguments: the program's arguments, without its name (which is `path`).
    ///   - environment: extra variables for the program ("NAME=value" wins over this process's).
    ///   - pendingUnitCount: the share of this node's units the program's tree stands for.
    ///   - name: shown with the program's root description ("worker 2: Importing 3 photos"), with its
    ///     output lines and in failure reasons; its file name by default.
    ///   - options: limits of the mount (see `ProgressMount.Options`).
    ///   - outputLines: called with each line the program writes, in order, on the thread that reads
    ///     every mount: return quickly (the lines of every mount wait meanwhile).
    /// - Returns: the mount; its `node` is the mirrored root, already attached to this node, and its
    ///   `processIdentifier` the program's.
    /// - Throws: `StreamSetupError` when the program cannot be started.
    public func mountProcess(
        path: String, arguments: [String] = [], environment: [String: String] = [:], pendingUnitCount: Int64,
        name: String? = nil, options: ProgressMount.Options = ProgressMount.Options(),
        outputLines: (@Sendable (ProgressMount.OutputLine) -> Void)? = nil
    ) throws(StreamSetupError) -> ProgressMount {
        let variable = ProgressPublisher.environmentVariable
        var entries = ProcessEnvironment.entries.filter {
            !$0.hasPrefix(variable + "=") && !environment.keys.contains(String($0.prefix(while: { $0 != "=" })))
        }
        entries += environment.map { "\($0.key)=\($0.value)" }
        entries.append("\(variable)=3")
        let (mine, theirs) = try StreamSetupError.rethrowing(Sockets.pair())
        var opened = [mine, theirs]
        defer { for descriptor in opened { FileDescriptor.close(descriptor) } }
        let output = try StreamSetupError.rethrowing(FileDescriptor.pipe())
        opened += [output.read, output.write]
        let error = try StreamSetupError.rethrowing(FileDescriptor.pipe())
        opened += [error.read, error.write]
        // From the reactor's thread, which lasts as long as the process: the parent-death signal follows
        // the thread that starts the program.
        let environmentEntries = entries
        let started = try StreamReactor.shared.performAndWait { () throws(StreamSetupError) -> ChildProcess.Started in
            try StreamSetupError.rethrowing(
                ChildProcess.spawn(
                    path: path, arguments: arguments, environment: environmentEntries,
                    handOn: [(theirs, 3), (-1, 0), (output.write, 1), (error.write, 2)]))
        }
        opened = [theirs, output.write, error.write]  // the program's ends: closed here, the rest is the mount's
        Signals.ignoreBrokenPipe()
        let mount = ProgressMount(
            parent: self, pendingUnitCount: pendingUnitCount,
            name: name ?? String(path.split(separator: "/").last ?? Substring(path)), input: mine, commands: mine,
            outputs: [(output.read, .standardOutput), (error.read, .standardError)], outputHandler: outputLines,
            started: started, options: options)
        mount.start()
        return mount
    }

    /// Connects to `host`:`port` over TCP and mounts the tree published there (`ProgressListener`, or
    /// `ProgressPublisher` on an accepted socket) as a child of this node standing for `pendingUnitCount`
    /// of its units. Commands go back on the same connection. A dropped connection fails the mirrored node
    /// with the reason.
    ///
    /// TCP has no notion of users: prefer `mountConnection(path:…)` on this machine, and ssh for others
    /// (`Docs/Mounting.md`).
    ///
    /// - Throws: `StreamSetupError` when the connection cannot be made.
    public func mountConnection(
        host: String, port: UInt16, pendingUnitCount: Int64, name: String? = nil,
        options: ProgressMount.Options = ProgressMount.Options()
    ) throws(StreamSetupError) -> ProgressMount {
        let socket = try StreamSetupError.rethrowing(Sockets.connect(host: host, port: port))
        return mount(
            fileDescriptor: socket, commandDescriptor: socket, pendingUnitCount: pendingUnitCount,
            name: name ?? "\(host):\(port)", options: options)
    }

    /// Connects to the Unix-domain socket at `path` (`ProgressListener(_:path:)`) and mounts the tree
    /// published there as a child of this node standing for `pendingUnitCount` of its units. Commands go
    /// back on the same connection.
    ///
    /// The socket must belong to this user, in a directory only this user can write
    /// (`ProgressSocket.privateSocketPath(named:)` makes such a path): a tree read from someone else's
    /// socket, and commands sent there, would not be this user's.
    ///
    /// - Throws: `StreamSetupError` when the path is not safe or the connection cannot be made.
    public func mountConnection(
        path: String, pendingUnitCount: Int64, name: String? = nil,
        options: ProgressMount.Options = ProgressMount.Options()
    ) throws(StreamSetupError) -> ProgressMount {
        let socket = try StreamSetupError.rethrowing(Sockets.connect(path: path))
        return mount(
            fileDescriptor: socket, commandDescriptor: socket, pendingUnitCount: pendingUnitCount,
            name: name ?? String(path.split(separator: "/").last ?? Substring(path)), options: options)
    }

    /// Mounts the tree served over HTTP at `url` (the server's event stream, `http://host:8080/events`;
    /// `Docs/WireFormat.md`, "Over HTTP") as a child of this node standing for `pendingUnitCount` of its
    /// units, as a process or a socket is mounted. Anything in the path that passes HTTP on (a reverse
    /// proxy) may stand between: nothing there needs to know the format.
    ///
    /// - Commands (`cancel()`, `pause()`, `resume()` on the mirrored nodes) are posted, in order, to
    ///   `commands` beside the events' path (`http://host:8080/commands`) with the header
    ///   `ProgressTree-Token`: `token`, or else the server's `token` (`GET http://host:8080/token`, asked
    ///   once, when the first command is sent). A server that answers that request 404 is read-only: no
    ///   command is sent. Commands that fail are counted in `diagnostics.failedCommands`, those not sent to
    ///   a read-only server in `diagnostics.unsentCommands`.
    /// - A connection that drops before the root's final line is made again after the server's `retry`
    ///   (1 s by default), with `Last-Event-ID`; the mirror stays as it was meanwhile. The snapshot a
    ///   reconnection brings updates it, and its nodes the snapshot does not name ended while the
    ///   connection was down: they finish (`diagnostics.finishedWhileAway`).
    /// - A server out of reach for `options.reconnectionLimit` (10 s) fails the mirrored root with the URL
    ///   and the error ("http://10.200.1.2:8080/events: connection refused for 10 s"); an answer other than
    ///   an event stream fails it at once ("http://host:8080/events answered 404 Not Found"), except 502,
    ///   503 and 504, which a proxy answers while its server is away, and which count as out of reach.
    /// - After the root's final line the connection is closed, never made again.
    ///
    /// https is not supported: this module has no TLS. Reach such a server through a TLS-terminating
    /// tunnel (stunnel, `ssh -L`, a local reverse proxy) and mount its http:// URL.
    ///
    /// The server's lines are read by the thread that reads every mount; the connection is kept by a
    /// thread of this mount's own, which ends with it. The publisher is not paced
    /// (`Options.pacesPublisher`): its walks serve every reader of the server.
    ///
    /// - Parameters:
    ///   - url: the server's event stream: `http://host[:port]/path`.
    ///   - pendingUnitCount: the share of this node's units the served tree stands for.
    ///   - name: shown with the served root's description ("render farm: Rendering 40 frames"); the URL's
    ///     host and port by default.
    ///   - token: the server's token for commands (32 hexadecimal digits); asked of the server when `nil`.
    ///   - options: limits of the mount, `reconnectionLimit` and `silenceLimit` among them.
    /// - Returns: the mount; its `node` is the mirrored root, already attached to this node.
    /// - Throws: `ProgressMount.UnsupportedURL` for https and URLs that are not `http://host…` (or a token
    ///   a header cannot carry); `StreamSetupError` when the mount's pipes cannot be made.
    public func mountConnection(
        url: String, pendingUnitCount: Int64, name: String? = nil, token: String? = nil,
        options: ProgressMount.Options = ProgressMount.Options()
    ) throws -> ProgressMount {
        let location = try HTTPLocation(parsing: url)
        if let token, token.isEmpty || !token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
            throw ProgressMount.UnsupportedURL(url: url, reason: "the token holds characters a header cannot carry")
        }
        let stream = try StreamSetupError.rethrowing(FileDescriptor.pipe())
        let commands: (read: Int32, write: Int32)
        do {
            commands = try StreamSetupError.rethrowing(FileDescriptor.pipe())
        } catch {
            FileDescriptor.close(stream.read)
            FileDescriptor.close(stream.write)
            throw error
        }
        Signals.ignoreBrokenPipe()
        var mountOptions = options
        mountOptions.pacesPublisher = false
        let mount = ProgressMount(
            parent: self, pendingUnitCount: pendingUnitCount, name: name ?? location.hostField, input: stream.read,
            commands: commands.write, readsSnapshotMarkers: true, options: mountOptions)
        mount.start()
        HTTPEventClient.start(
            location: location, mount: mount, output: stream.write, commandInput: commands.read, token: token,
            options: options)
        return mount
    }
}
