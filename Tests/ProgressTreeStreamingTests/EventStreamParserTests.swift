import XCTest

@testable import ProgressTreeStreaming

/// The pure parsers of a mount over HTTP: the event-stream framing (Server-Sent Events, as the HTML standard
/// reads it), the HTTP response's head and body framing, and the URLs a mount takes.
final class EventStreamParserTests: XCTestCase {
    /// The items `text` gives, fed in pieces of `piece` bytes.
    func items(_ text: String, piece: Int = .max, parser: inout EventStreamParser) -> [EventStreamParser.Item] {
        var items: [EventStreamParser.Item] = []
        let bytes = Array(text.utf8)
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + piece)
            bytes[start..<end].withUnsafeBytes { parser.feed($0) { items.append($0) } }
            start = end
        }
        return items
    }

    func items(_ text: String, piece: Int = .max) -> [EventStreamParser.Item] {
        var parser = EventStreamParser(maximumLineLength: 1024)
        return items(text, piece: piece, parser: &parser)
    }

    func message(_ data: String) -> EventStreamParser.Item { .event(type: "message", data: Array(data.utf8)) }

    func test_events_fields_and_comments_as_the_standard_reads_them() {
        let stream = """
            retry: 1000
            : keep-alive

            id: 42
            data: {"v":1,"id":1}

            event: synced
            data: {"v":1,"synced":42}

            data:no space
            data:  two spaces
            unknown: field
            data

            id: 43
            event: other

            """ + "\n"
        XCTAssertEqual(
            items(stream),
            [
                .retry(1000), message(#"{"v":1,"id":1}"#),
                .event(type: "synced", data: Array(#"{"v":1,"synced":42}"#.utf8)),
                message("no space\n two spaces\n"),
            ])
        var parser = EventStreamParser(maximumLineLength: 1024)
        _ = items(stream, parser: &parser)
        XCTAssertEqual(parser.lastEventID, "43")  // set at the dispatch of an event without data too
    }

    func test_cr_lf_and_crlf_line_ends_and_a_bom_in_any_pieces() {
        let expected = [message("a"), message("b"), message("c"), message("d")]
        let stream = "\u{FEFF}data: a\r\n\r\ndata: b\r\rdata: c\n\ndata: d\r\n\r\n"
        for piece in [1, 2, 3, 7, 1000] {
            XCTAssertEqual(items(stream, piece: piece), expected, "pieces of \(piece)")
        }
        // A byte order mark later than the stream's start is part of a line: that line's field is unknown.
        XCTAssertEqual(items("data: a\n\n\u{FEFF}data: b\n\n"), [message("a")])
    }

    func test_an_id_with_nul_is_ignored_and_retry_takes_digits_only() {
        var parser = EventStreamParser(maximumLineLength: 1024, lastEventID: "7")
        XCTAssertEqual(
            items("retry: 1s\nretry: -5\nretry: 250\nid: a\u{0}b\ndata: x\n\n", parser: &parser),
            [.retry(250), message("x")])
        XCTAssertEqual(parser.lastEventID, "7")
        XCTAssertEqual(items("id\ndata: y\n\n", parser: &parser), [message("y")])
        XCTAssertEqual(parser.lastEventID, "")  // an `id` field without a value empties it
    }

    func test_an_oversized_line_or_event_is_dropped_in_bounded_memory() {
        var parser = EventStreamParser(maximumLineLength: 16)
        let long = String(repeating: "x", count: 40)
        XCTAssertEqual(
            items(
                "data: \(long)\ndata: ok\n\ndata: 0123456\ndata: 0123456\ndata: 0123456\n\ndata: z\n\n", piece: 5,
                parser: &parser),
            [.oversized, message("ok"), .oversized, message("z")])
    }

    // MARK: HTTP responses

    func decode(_ text: String, piece: Int) throws -> (HTTPResponseDecoder, String) {
        var decoder = HTTPResponseDecoder()
        var body: [UInt8] = []
        let bytes = Array(text.utf8)
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + piece)
            try bytes[start..<end].withUnsafeBytes { try decoder.feed($0) { body += $0 } }
            start = end
        }
        return (decoder, String(decoding: body, as: UTF8.self))
    }

    func test_a_chunked_answer_with_extensions_and_trailers_in_any_pieces() throws {
        let answer =
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            + "Transfer-Encoding: chunked\r\nX-A: 1\r\nx-a: 2\r\n\r\n"
            + "5;name=value\r\nhello\r\nA\r\n, world!\r\n\r\n0\r\nTrailer: x\r\n\r\nignored"
        for piece in [1, 3, 1000] {
            let (decoder, body) = try decode(answer, piece: piece)
            XCTAssertEqual(body, "hello, world!\r\n")
            XCTAssertTrue(decoder.isComplete)
            XCTAssertEqual(decoder.head?.status, 200)
            XCTAssertEqual(decoder.head?.fields["content-type"], "text/event-stream")
            XCTAssertEqual(decoder.head?.fields["x-a"], "1, 2")
        }
    }

    func test_length_and_until_close_bodies_and_statuses() throws {
        let (sized, body) = try decode("HTTP/1.1 404 Not Found\nContent-Length: 4\n\nnot here", piece: 2)
        XCTAssertEqual(body, "not ")
        XCTAssertTrue(sized.isComplete)
        XCTAssertEqual(sized.head?.statusText, "404 Not Found")
        let (open, rest) = try decode("HTTP/1.0 200 OK\r\n\r\ndata: a\n\n", piece: 4)
        XCTAssertEqual(rest, "data: a\n\n")
        XCTAssertFalse(open.isComplete)
        XCTAssertTrue(open.endsWithConnection)
        XCTAssertTrue(try decode("HTTP/1.1 204 No Content\r\n\r\n", piece: 100).0.isComplete)
    }

    func test_bad_answers_are_errors_never_unbounded() {
        XCTAssertThrowsError(try decode("SSH-2.0-OpenSSH\r\n\r\n", piece: 100)) {
            XCTAssertEqual($0 as? HTTPResponseDecoder.Failure, .malformedHead)
        }
        XCTAssertThrowsError(try decode("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", piece: 100)) {
            XCTAssertEqual($0 as? HTTPResponseDecoder.Failure, .malformedChunk)
        }
        let endless = "HTTP/1.1 200 OK\r\n" + String(repeating: "X-Filler: 0123456789\r\n", count: 2000)
        XCTAssertThrowsError(try decode(endless, piece: 4096)) {
            XCTAssertEqual($0 as? HTTPResponseDecoder.Failure, .headTooLarge)
        }
    }

    // MARK: URLs

    func test_urls_their_siblings_and_what_is_refused() throws {
        let plain = try HTTPLocation(parsing: "http://10.200.1.2:8080/events")
        XCTAssertEqual([plain.host, plain.path, plain.hostField], ["10.200.1.2", "/events", "10.200.1.2:8080"])
        XCTAssertEqual(plain.sibling("commands"), "/commands")
        let nested = try HTTPLocation(parsing: "HTTP://[::1]/jobs/7/events?since=3#top")
        XCTAssertEqual([nested.host, nested.path, nested.hostField], ["::1", "/jobs/7/events?since=3", "[::1]:80"])
        XCTAssertEqual(nested.sibling("token"), "/jobs/7/token")
        XCTAssertEqual(try HTTPLocation(parsing: "http://host").path, "/")
        XCTAssertThrowsError(try HTTPLocation(parsing: "https://example.com/events")) {
            XCTAssertEqual(
                "\($0)",
                "https://example.com/events: https is not supported by ProgressTreeStreaming, which has no TLS: "
                    + "reach the server through a TLS-terminating tunnel (stunnel, ssh -L, a local reverse proxy) "
                    + "and mount its http:// URL")
        }
        for refused in [
            "ftp://host/x", "http://", "http://host:0/", "http://host:99999/", "http://u:p@host/",
            "http://host/a b", "http://host/a\r\nX: y", "http://[::1/",
        ] {
            XCTAssertThrowsError(try HTTPLocation(parsing: refused), refused)
        }
    }
}
