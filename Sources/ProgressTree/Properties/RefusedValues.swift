import ProgressTreePlatform

// The rule a value set meets once its node has left its parent (Docs/Properties.md, "Values set after a
// node ends"): a node's values count in its ancestors while it is in its parent's tree; when it finishes or
// fails, its parent takes its summaries, for good. A value set after that could not reach the ancestors, so
// it is refused (the node keeps the values it had) and said, once per property, rather than dropped silently.

/// Says that values were refused: once per property type, on standard error, naming the rule.
package enum RefusedValues {
    /// The property types already said, and where the message goes (standard error; tests take it).
    private struct State {
        var said: Set<ObjectIdentifier> = []
        var sink: @Sendable (String) -> Void = RefusedValues.writeToStandardError
    }

    private static let state = Lock(State())

    /// Says that a value of `property` set on a node that left its parent was refused, if this process has not
    /// said it of `property` yet. Outside every lock of the tree.
    static func report(_ property: any ProgressProperty.Type, label: String?) {
        let sink = state.withLock { state -> (@Sendable (String) -> Void)? in
            state.said.insert(ObjectIdentifier(property)).inserted ? state.sink : nil
        }
        sink?(message(property, label: label))
    }

    /// The message for `property`, on a node described as `label`.
    static func message(_ property: any ProgressProperty.Type, label: String?) -> String {
        let node = label.map { "“\($0)”" } ?? "a node"
        return "ProgressTree: a value of \(property) set on \(node) after it finished or failed was not stored: "
            + "its parent counted its values when it ended, and nothing after that reaches its ancestors. "
            + "Set the value before the node's last unit (or before fail(_:)). "
            + "(Said once per property.)\n"
    }

    /// For tests: sends the messages to `sink` from now on, and forgets which properties were said.
    package static func redirect(to sink: @escaping @Sendable (String) -> Void) {
        state.withLock { state in
            state.said = []
            state.sink = sink
        }
    }

    /// Where the messages go unless a test says otherwise.
    @Sendable
    package static func writeToStandardError(_ message: String) {
        StandardError.write(message)
    }
}
