#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import ProgressTree
import ProgressTreePlatform
import Synchronization

extension ProgressMount {
    // The mounted program's output: its standard output and error, line by line, to the output handler.

    /// On the reactor's thread: reads what the program wrote on output `index` and hands over its lines.
    func readOutput(_ index: Int, into buffer: UnsafeMutableRawBufferPointer) -> StreamReactor.Next {
        let descriptor = outputs[index].descriptor
        let count = FileDescriptor.read(descriptor, into: buffer)
        if count < 0 && ErrorNumber.last == ErrorNumber.wouldBlock { return .keepWatching }
        let lines = reading.withLock { reading -> [[UInt8]] in
            guard count > 0 else { return reading.outputSplitters[index].remainder().map { [$0] } ?? [] }
            return reading.outputSplitters[index].append(UnsafeRawBufferPointer(rebasing: buffer[0..<count])).map {
                if case .line(let line) = $0 { line } else { [] }
            }
        }
        let source = outputs[index].source
        for line in lines {
            outputHandler(OutputLine(source: source, text: String(decoding: line, as: UTF8.self), mountName: name))
        }
        return count > 0 ? .keepWatching : .stopWatching
    }

    /// On the reactor's thread, once: output `index` ended (its end, or the time given to the process's
    /// descendants ran out), every line of it handed over.
    func outputEnded(_ index: Int) {
        let rest = reading.withLock { $0.outputSplitters[index].remainder() }
        if let rest {
            outputHandler(
                OutputLine(source: outputs[index].source, text: String(decoding: rest, as: UTF8.self), mountName: name))
        }
        FileDescriptor.close(outputs[index].descriptor)
        partEnded()
    }

    /// The default output handler: each line, whole, to this process's standard output or error, where
    /// the program wrote it.
    static let writeToStandardStreams: @Sendable (OutputLine) -> Void = { line in
        _ = FileDescriptor.sendAll(line.source == .standardOutput ? 1 : 2, Array((line.text + "\n").utf8))
    }
}
