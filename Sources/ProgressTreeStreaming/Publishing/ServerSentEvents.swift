/// The event-stream framing of a served tree (`Docs/WireFormat.md`, "Over HTTP (Server-Sent Events)"), as
/// bytes: what `ProgressEventStream` hands its subscribers, so that an HTTP server only moves them.
enum ServerSentEvents {
    /// The stream's first field: a reader reconnects after one second.
    static let retry: [UInt8] = Array("retry: 1000\n\n".utf8)
    /// The comment sent when nothing else was for `ProgressEventStream.Options.keepAliveInterval`.
    static let keepAlive: [UInt8] = Array(": keep-alive\n\n".utf8)

    /// Appends the event that names the stream's run, at the start of each reader's stream (after `retry`):
    /// `event: run` and `{"v":1,"run":"…"}`. A reader that sees another run than the one it read before
    /// starts again from that run's state (`Docs/WireFormat.md`, "Runs").
    static func appendRun(_ run: String, to out: inout [UInt8]) {
        out.append(contentsOf: "event: run\ndata: {\"v\":1,\"run\":\"\(run)\"}\n\n".utf8)
    }

    /// Appends one event: `id: walk`, `data: line` (a wire line, without its newline: it holds none).
    static func appendEvent(walk: UInt64, line: some Collection<UInt8>, to out: inout [UInt8]) {
        out.append(contentsOf: "id: \(walk)\ndata: ".utf8)
        out.append(contentsOf: line)
        out.append(contentsOf: "\n\n".utf8)
    }

    /// Appends the event that ends a joining reader's snapshot: `event: synced`, the walk's id, and
    /// `{"v":1,"synced":walk}`.
    static func appendSynced(walk: UInt64, to out: inout [UInt8]) {
        out.append(contentsOf: "event: synced\nid: \(walk)\ndata: {\"v\":1,\"synced\":\(walk)}\n\n".utf8)
    }
}
