// loading-rows — fetches rows from a slow source in the background while a spinner shows that something
// is happening, then prints them as a table.
//
//   swift run loading-rows [--rows N] [--delay SECONDS] [--fail] [--progress auto|live|plain|accessible|json|none]
//
// The size of the work is unknown, so there is no bar: `performActivity` makes the node indeterminate
// while the fetch runs (the renderer draws a spinner) and finishes it when the rows arrive, back on the
// caller's actor; an error fails it (`--fail`: the renderer marks the load failed with the reason, and the
// program exits with status 1; the error is printed only where no display showed it, with --progress none
// or json) and a cancellation cancels it. The table goes to standard output and the progress to standard
// error, so `loading-rows > rows.txt` writes only the table (in json mode the JSON lines take standard
// output and the table goes to standard error).

import Dispatch
import ExampleSupport
import Foundation
import ProgressTree
import ProgressTreeTerminal
import Synchronization

@main
struct LoadingRows {
    static func main() async {
        guard let options = Options.parseCommandLine(program: "loading-rows") else { return }

        let loading = ProgressNode.discreteProgress(totalUnitCount: 0)
        loading.localizedDescription = "Loading customers from the archive…"
        // Ctrl-C cancels the node, and so the fetch. No keys to press, but typing is not echoed over the
        // spinner.
        let display = ExampleDisplay(loading, mode: options.progress, keys: .ignored)
        let renderer = display.renderer
        let archive = Archive(delay: .milliseconds(Int(options.delay * 1000)), fails: options.fails)

        renderer.start()
        let result: Result<[Archive.Customer], any Error>
        do {
            let count = options.rows
            result = .success(try await loading.performActivity { try await archive.fetchCustomers(count: count) })
        } catch {
            result = .failure(error)
        }
        display.stop()  // the node has ended (finished, failed or cancelled): the spinner is gone

        switch result {
        case .success(let customers):
            printTable(customers, on: display)
        case .failure(is CancellationError):
            FileHandle.standardError.write(Data("Cancelled: no rows loaded.\n".utf8))
            exit(display.exitStatusAfterCancelling)
        case .failure(let error):
            // Live and plain, the load's line says it failed and why: said once. Otherwise it is said here.
            if !display.showsOutcome { FileHandle.standardError.write(Data("loading-rows: \(error)\n".utf8)) }
            exit(1)
        }
    }

    /// The table, on standard output (standard error in json mode, where standard output holds the JSON
    /// lines).
    static func printTable(_ customers: [Archive.Customer], on display: ExampleDisplay) {
        func print(_ line: String) { display.report(line, wraps: false) }
        let header = ["ID", "Name", "City", "Plan", "Joined"]
        let rows = customers.map { [String($0.id), $0.name, $0.city, $0.plan, $0.joined] }
        var widths = header.map(\.count)
        for row in rows {
            for (column, cell) in row.enumerated() { widths[column] = max(widths[column], cell.count) }
        }
        // On a terminal narrower than the table, the columns that do not fit are left out, from the right
        // (ID and Name stay), and a line says so: the terminal would otherwise break rows inside their cells.
        var shown = header.count
        if let columns = display.reportColumns {
            while shown > 2, widths.prefix(shown).reduce(0, +) + 2 * (shown - 1) > columns - 1 { shown -= 1 }
        }
        func line(_ cells: [String]) -> String {
            var line = cells.prefix(shown).enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return column == 0 ? padding + cell : cell + padding  // numbers right, text left
            }.joined(separator: "  ")
            while line.last == " " { line.removeLast() }
            return line
        }
        print(line(header))
        print(widths.prefix(shown).map { String(repeating: "─", count: $0) }.joined(separator: "  "))
        for row in rows { print(line(row)) }
        print("\(customers.count) \(customers.count == 1 ? "row" : "rows")")
        if shown < header.count {
            let left = header[shown...].joined(separator: ", ")
            display.report("\(left) left out to fit the terminal; loading-rows > rows.txt writes every column.")
        }
    }
}
