/// The payloads of the store's notifications (`NOTIFY`), one channel each: what changed, so that every
/// instance reads only what it needs. Each is `1` (the payload's version), then fields separated by
/// spaces; a payload that does not read as one (another program's, on the same channel) is skipped and
/// counted (`ProgressJobStore.Diagnostics.foreignNotifications`), never acted on.
enum JobNotification: Equatable, Sendable {
    /// A job's rows changed: `1 <seq> <run> <job id>` on `changesChannel` (seq 0: the run began).
    case changed(jobID: String, run: String, seq: Int64)
    /// A job's rows were removed (its retention ended): `1 removed <run> <job id>` on `changesChannel`.
    case removed(jobID: String, run: String)
    /// A command waits for a job: `1 <run> <job id>` on `commandsChannel`.
    case command(jobID: String, run: String)

    static let changesChannel = "progresstree_changes"
    static let commandsChannel = "progresstree_commands"

    /// Reads a payload of `channel`; `nil`: not one of ours.
    init?(channel: String, payload: String) {
        let fields = payload.split(separator: " ", omittingEmptySubsequences: false)
        switch channel {
        case Self.changesChannel:
            guard fields.count == 4, fields[0] == "1", RunIdentity.isRun(fields[2]), JobID.isValid(fields[3])
            else { return nil }
            if fields[1] == "removed" {
                self = .removed(jobID: String(fields[3]), run: String(fields[2]))
                return
            }
            guard let seq = Int64(fields[1]), seq >= 0 else { return nil }
            self = .changed(jobID: String(fields[3]), run: String(fields[2]), seq: seq)
        case Self.commandsChannel:
            guard fields.count == 3, fields[0] == "1", RunIdentity.isRun(fields[1]), JobID.isValid(fields[2])
            else { return nil }
            self = .command(jobID: String(fields[2]), run: String(fields[1]))
        default:
            return nil
        }
    }
}

/// Job ids: what the application names its jobs with (`"resize-42"`, a UUID), or one the store mints.
enum JobID {
    /// The longest id.
    static let maximumLength = 128

    /// Whether `id` is 1 to 128 ASCII letters, digits, `-`, `_` and `.`: safe in a path, a payload and a
    /// log line as it is.
    static func isValid(_ id: some StringProtocol) -> Bool {
        (1...maximumLength).contains(id.utf8.count)
            && id.utf8.allSatisfy { byte in
                switch byte {
                case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                    true
                default: false
                }
            }
    }
}

/// Runs and tokens: 32 lowercase hexadecimal digits from the system's random generator.
enum RunIdentity {
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let text = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }.joined()
    }

    /// Whether `text` is one (32 lowercase hexadecimal digits).
    static func isRun(_ text: some StringProtocol) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
