import Foundation

/// A reader of the wire format written from `Docs/WireFormat.md` alone (no code of the library): it keeps
/// the last line of each `id`, stops at the root's final line, and notes every place where the stream
/// breaks one of the doc's rules for writers; `unaccountedOutcomes` says whether the nodes it named
/// account for the root's `failedBelow` and `cancelledBelow`, as they do when no node was left unnamed.
struct WireFormatReader {
    /// A node as its last line left it.
    struct Node: Equatable {
        var id: Int
        var parent: Int?
        var name: String
        var state: String
        var reason: String?
        var failedBelow: Int
        var cancelledBelow: Int
    }

    /// The last line of each id the stream named, as read up to the root's final line.
    private(set) var nodes: [Int: Node] = [:]
    /// The rules the stream broke, one sentence each, in the order found.
    private(set) var violations: [String] = []
    /// How many lines of the wire format were read.
    private(set) var lineCount = 0
    private var previous: [Int: [String: Any]] = [:]
    private var rootID: Int?
    private var hasEnded = false

    private static let finalStates: Set<String> = ["finished", "cancelled", "failed"]

    /// Reads `text`: the lines that start with `{` are the stream, any other line (a program's own
    /// messages on the same pipe) is skipped.
    init(_ text: String) {
        for line in text.split(separator: "\n") where line.hasPrefix("{") {
            read(String(line))
        }
        if !hasEnded { violations.append("the stream ended before the root's final line") }
        for node in nodes.values.sorted(by: { $0.id < $1.id }) where !Self.finalStates.contains(node.state) {
            violations.append("node \(node.id) (\(node.name)) ends \(node.state), not in a final state")
        }
    }

    /// The root: the node without a parent.
    var root: Node? { rootID.flatMap { nodes[$0] } }

    /// The nodes whose last line says `state`, by id.
    func nodes(in state: String) -> [Node] {
        nodes.values.filter { $0.state == state }.sorted { $0.id < $1.id }
    }

    /// Where the named nodes below the root do not account for the root's final line: the nodes named
    /// failed against its `failedBelow`, those named cancelled against its `cancelledBelow` (WireFormat.md:
    /// every node that failed or was cancelled is named, but those it says may stay unnamed). One sentence
    /// a mismatch.
    var unaccountedOutcomes: [String] {
        guard let root else { return ["no root"] }
        var mismatches: [String] = []
        let failed = nodes(in: "failed").filter { $0.id != root.id }.count
        if failed != root.failedBelow {
            mismatches.append("\(failed) nodes named failed, the root's failedBelow is \(root.failedBelow)")
        }
        let cancelled = nodes(in: "cancelled").filter { $0.id != root.id }.count
        if cancelled != root.cancelledBelow {
            mismatches.append("\(cancelled) nodes named cancelled, the root's cancelledBelow is \(root.cancelledBelow)")
        }
        return mismatches
    }

    private mutating func read(_ line: String) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else {
            violations.append("not a JSON object: \(line)")
            return
        }
        lineCount += 1
        guard object["v"] as? Int == 1 else {
            violations.append("not version 1: \(line)")
            return
        }
        guard let id = object["id"] as? Int, id >= 1, object["completed"] is Int, object["total"] is Int,
            let state = object["state"] as? String
        else {
            violations.append("a required field is missing: \(line)")
            return
        }
        if hasEnded {
            violations.append("a line after the root's final line: \(line)")
            return
        }
        let parent = object["parent"] as? Int
        if let earlier = previous[id] {
            var before = earlier
            var now = object
            before["time"] = nil
            now["time"] = nil
            if NSDictionary(dictionary: before).isEqual(to: now) {
                violations.append("node \(id) repeats its previous line: \(line)")
            }
            if (earlier["parent"] as? Int) != parent {
                violations.append("node \(id) changed parent: \(line)")
            }
        } else if let parent {
            if nodes[parent] == nil {
                violations.append("node \(id) comes before its parent \(parent): \(line)")
            }
        } else if let rootID, rootID != id {
            violations.append("a second root \(id): \(line)")
        }
        if parent == nil { rootID = id }
        previous[id] = object
        nodes[id] = Node(
            id: id, parent: parent, name: object["name"] as? String ?? "", state: state,
            reason: object["reason"] as? String, failedBelow: object["failedBelow"] as? Int ?? 0,
            cancelledBelow: object["cancelledBelow"] as? Int ?? 0)
        if state == "failed" && (nodes[id]?.reason ?? "").isEmpty {
            violations.append("node \(id) failed without a reason: \(line)")
        }
        if parent == nil && Self.finalStates.contains(state) { hasEnded = true }
    }
}
