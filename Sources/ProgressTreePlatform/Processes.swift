#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif
import CProgressTreePlatform

/// The programs the streaming module starts (`mountProcess`): starting one, learning when it ends.
package enum ChildProcess {
    /// The signal a program started by `spawn` gets when this process ends (Linux).
    package static let parentDeathSignal = SIGTERM

    /// A program started by `spawn`: its process, which leads a process group of its own (the group's id
    /// is `pid`), and the watcher that ends that group.
    package struct Started: Sendable {
        /// The program's process id, which is also its process group's.
        package var pid: Int32
        /// The watcher's process id: a child of this process, to be reaped once it ends.
        package var watcher: Int32
        /// The write end of the watcher's pipe: closing it (`endGroup`) ends the group.
        package var watcherDescriptor: Int32
    }

    /// How long the group's watcher waits between its SIGTERM and its SIGKILL: 1 s.
    package static let groupGrace = Duration.seconds(1)

    /// Starts `path` with `arguments` (without argv[0]) and `environment` ("NAME=value"). Each
    /// `(source, target)` of `handOn` becomes descriptor `target` in the new process (a source of -1:
    /// /dev/null); the other descriptors of this process stay out (they are close-on-exec where this
    /// module made them). On Linux the program gets `parentDeathSignal` when the thread that starts it
    /// ends: the streaming module's reactor starts every program from its own thread, which lasts as long as
    /// the process. Not on tvOS and watchOS, which start no process (`ENOTSUP`).
    ///
    /// The program leads a process group of its own, which what it starts joins, and a watcher process
    /// (a member of the group, running `/bin/sh`; see `progresstree_spawn`) guards the group: when `endGroup(_:)` closes its pipe, or this process ends however it ends (the
    /// system closes a dead process's descriptors, `kill -9` included), the watcher sends SIGTERM to the
    /// group, then SIGKILL `groupGrace` later. Reap both `pid` and `watcher` (`waitForExit`).
    package static func spawn(
        path: String, arguments: [String], environment: [String], handOn: [(source: Int32, target: Int32)]
    ) throws(PlatformError) -> Started {
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        let sources = handOn.map(\.source)
        let targets = handOn.map(\.target)
        var pid: pid_t = 0
        var watcher: pid_t = 0
        var watcherDescriptor: Int32 = -1
        let graceMilliseconds = Int32(groupGrace.components.seconds * 1000)
        let result = progresstree_spawn(
            path, argv, envp, sources, targets, Int32(handOn.count), parentDeathSignal,
            Signals.ignoredBrokenPipe.load(ordering: .relaxed) ? 1 : 0, graceMilliseconds, &pid, &watcher,
            &watcherDescriptor)
        guard result == 0 else { throw .system("cannot start \(path)", result) }
        return Started(pid: pid, watcher: watcher, watcherDescriptor: watcherDescriptor)
    }

    /// Ends the process group of a program `spawn` started: closes `started.watcherDescriptor`, on which its
    /// watcher sends SIGTERM to the group, and SIGKILL `groupGrace` later. Call it once.
    package static func endGroup(_ started: Started) {
        FileDescriptor.close(started.watcherDescriptor)
    }

    /// How a process ended.
    package enum ExitStatus: Equatable, Sendable {
        case exited(Int32)
        case signalled(Int32)
    }

    /// Waits for process `pid` to end (retrying `EINTR`); with `blocking: false`, `nil` while it runs.
    package static func waitForExit(_ pid: Int32, blocking: Bool = true) -> ExitStatus? {
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, blocking ? 0 : WNOHANG)
            if result == 0 { return nil }
            if result == -1 {
                if errno == EINTR { continue }
                return .exited(-1)
            }
            break
        }
        let signal = status & 0x7F
        return signal == 0 ? .exited((status >> 8) & 0xFF) : .signalled(signal)
    }

    /// A descriptor that becomes readable when child `pid` ends (Linux 5.3 or later), close-on-exec, or
    /// `nil`.
    package static func descriptor(_ pid: Int32) -> Int32? {
        let descriptor = progresstree_process_descriptor(pid)
        return descriptor >= 0 ? descriptor : nil
    }
}

/// The environment of this process.
package enum ProcessEnvironment {
    /// Every variable, "NAME=value".
    package static var entries: [String] {
        var result: [String] = []
        var pointer = environ
        while let entry = pointer.pointee {
            result.append(String(cString: entry))
            pointer += 1
        }
        return result
    }

    /// The value of variable `name`, if it is set.
    package static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    package static func unset(_ name: String) {
        _ = unsetenv(name)
    }
}

/// This process's end.
package enum CurrentProcess {
    /// Ends the process with `status`, as `exit(3)` does: handlers registered with `atexit` run and
    /// standard I/O streams are flushed.
    package static func exit(_ status: Int32) -> Never {
        systemExit(status)
    }
}

private func systemExit(_ status: Int32) -> Never {
    exit(status)
}
