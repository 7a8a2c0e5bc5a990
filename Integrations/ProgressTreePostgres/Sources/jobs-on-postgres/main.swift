// jobs-on-postgres: jobs whose progress lives in PostgreSQL (ProgressTreePostgres), so that a worker runs a
// job and any number of web instances, behind a load balancer, serve its page (Docs/JobsOnPostgreSQL.md).
//
//   jobs-on-postgres worker --postgres URL [--job ID] [--photos N] [--step-ms N] [--heartbeat-timeout S]
//       [--retention S] [--fail PHOTO]
//   jobs-on-postgres serve --postgres URL [--port N] [--address A] [--allowed-host NAME]...
//       [--allowed-origin ORIGIN]...
//
// worker: publishes one job (resizing N photos, each 10 steps of --step-ms) under --job ID (or one it is
// given), prints its id first on standard output, runs it, and prints the final tree, one node a line
// ("id parent state completed/total name"), when it ends. SIGTERM or Ctrl-C stop it: the job is recorded
// as failed, "the worker was stopped (SIGTERM)", never as cancelled by a user, and it exits 143 (130).
// serve: a web instance: GET /jobs/ID/ shows job ID's page from PostgreSQL, whichever process runs it, with
// its event stream and commands beside it; GET /health answers "ok". Its first line is its URL.
// Bad arguments: a usage message on standard error, exit status 2.

import Foundation
import ProgressTreePostgres

let arguments = Array(CommandLine.arguments.dropFirst())

do {
    switch arguments.first {
    case "worker": try await Worker(arguments: Array(arguments.dropFirst())).run()
    case "serve": try await Instance(arguments: Array(arguments.dropFirst())).run()
    default: throw UsageError("say worker or serve")
    }
} catch let error as UsageError {
    FileHandle.standardError.write(Data("jobs-on-postgres: \(error.message)\n\(usage)\n".utf8))
    exit(2)
} catch {
    FileHandle.standardError.write(Data("jobs-on-postgres: \(error)\n".utf8))
    exit(1)
}
