// jobs-app: a Hummingbird application of its own that runs background jobs and shows each job's progress
// (ProgressTreeWeb) at a path it chooses, behind its own authentication, beside its own routes.
//
//   swift run --package-path Integrations/ProgressTreeWeb jobs-app [--port N] [--auth cookie|bearer|none]
//       [--jobs N] [--images N] [--speed X] [--fail-every N] [--concurrency N] [--kept-jobs N]
//       [--allowed-origin ORIGIN]... [--allowed-host NAME]... [--secure-cookies]
//
// Its first line on standard output is its URL, http://127.0.0.1:PORT/. The application's routes and the
// progress routes side by side:
//
//   GET  /                          the application's own home page: its jobs, with links to their pages
//   GET  /health                    "ok", to anyone
//   POST /login                     (--auth cookie) user=ada&password=lovelace: a session cookie
//   GET  /api/jobs                  the jobs as JSON (behind the authentication)
//   POST /api/jobs                  queues a job ({"images":N}, optional): its id and page
//   POST /api/jobs/ID/ticket        (--auth bearer) a stream ticket for the job's page: {"page":"…?ticket=…"}
//   POST /api/all/ticket            (--auth bearer) the same for every job's page
//   /progress/jobs/ID/…             each job's page, event stream, token and commands (behind the authentication)
//   /progress/all/…                 every job below one long-lived root; queued jobs are shown as queued
//
// --auth cookie (the default): sessions in a cookie (HummingbirdAuth's SessionMiddleware), one user, ada,
// password lovelace. --auth bearer: `Authorization: Bearer ada-token` on /api; a browser opens a job's
// page with a ticket asked for with that header (ProgressStreamTickets). --auth none: open to whoever
// reaches it. --allowed-origin and --allowed-host are ProgressWebRoutes.Options' allowedOrigins and
// allowedHostNames (behind a reverse proxy, Docs/WebDashboard.md); a value that is not an origin is a usage
// error (exit status 2). A job's routes are finished when it ends, and the application keeps the last
// --kept-jobs jobs that ended (100), forgetting older ones (their pages answer 404): its memory stays
// bounded however many jobs it runs. SIGTERM or Ctrl-C stops it gracefully (swift-service-lifecycle): every
// reader's stream gets a last `ended` event, and it exits 0.

import Hummingbird
import HummingbirdAuth
import Logging
import ProgressTree
import ProgressTreeWeb

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

let usage = """
    usage: jobs-app [--port N] [--auth cookie|bearer|none] [--jobs N] [--images N] [--speed X] [--fail-every N]
                    [--concurrency N] [--kept-jobs N] [--allowed-origin ORIGIN]... [--allowed-host NAME]...
                    [--secure-cookies]

      --port N              the port to listen on, on 127.0.0.1 (default 0: any free port)
      --auth MODE           cookie (default: log in as ada / lovelace), bearer (Authorization: Bearer ada-token),
                            or none
      --jobs N              how many jobs to queue at start (default 3)
      --images N            how many images each of those jobs resizes (default 8)
      --speed X             how fast the simulated work goes (default 1.0)
      --fail-every N        make every Nth image of a job fail
      --concurrency N       how many jobs run at once (default 1)
      --kept-jobs N         how many jobs that ended are kept, with their pages (default 100; older ones are
                            forgotten)
      --allowed-origin O    an origin whose pages may send commands (behind a reverse proxy), scheme://host[:port],
                            repeatable
      --allowed-host NAME   a Host name to trust besides IP addresses and localhost, repeatable
      --secure-cookies      mark the stream tickets' cookies Secure (pages served over https)

    The first line on standard output is the application's URL. SIGTERM or Ctrl-C stops it gracefully.
    """

/// Writes `text` to standard error (unbuffered).
func printError(_ text: String) {
    _ = text.withCString { write(2, $0, strlen($0)) }
}

func fail(_ message: String) -> Never {
    printError("jobs-app: \(message)\n\(usage)\n")
    exit(2)
}

enum AuthMode: String, Sendable {
    case cookie, bearer, none
}

/// What the command line asked for.
struct Settings: Sendable {
    var port = 0
    var auth = AuthMode.cookie
    var initialJobs = 3
    var work = ResizeJob()
    var concurrency = 1
    var keptJobs = 100
    var secureCookies = false
    var options = ProgressWebRoutes.Options()

    init(_ words: ArraySlice<String>) {
        var arguments = words
        func value(of argument: String) -> String {
            guard let value = arguments.popFirst() else { fail("\(argument) needs a value") }
            return value
        }
        func number(of argument: String, in range: ClosedRange<Int>) -> Int {
            guard let number = Int(value(of: argument)), range.contains(number) else { fail("bad \(argument)") }
            return number
        }
        while let argument = arguments.popFirst() {
            switch argument {
            case "--port": port = number(of: argument, in: 0...65535)
            case "--auth":
                guard let mode = AuthMode(rawValue: value(of: argument)) else { fail("bad --auth") }
                auth = mode
            case "--jobs": initialJobs = number(of: argument, in: 0...1000)
            case "--images": work.images = number(of: argument, in: 0...10_000)
            case "--speed":
                guard let speed = Double(value(of: argument)), speed > 0, speed.isFinite else { fail("bad --speed") }
                work.speed = speed
            case "--fail-every": work.failEvery = number(of: argument, in: 1...10_000)
            case "--concurrency": concurrency = number(of: argument, in: 1...100)
            case "--kept-jobs": keptJobs = number(of: argument, in: 0...100_000)
            case "--allowed-origin":
                // Checked here: `allowedOrigins` takes origins only (anything else stops the program).
                let origin = value(of: argument)
                guard ProgressWebRoutes.Options.normalizedOrigin(origin) != nil else {
                    fail(
                        "bad --allowed-origin \(origin): write scheme://host[:port] as the browser shows the "
                            + "page's address (http or https, no path, no wildcard)")
                }
                options.allowedOrigins.append(origin)
            case "--allowed-host": options.allowedHostNames.append(value(of: argument))
            case "--secure-cookies": secureCookies = true
            case "--help", "-h":
                print(usage)
                exit(0)
            default: fail("unknown argument \(argument)")
            }
        }
    }
}

let settings = Settings(CommandLine.arguments.dropFirst())
let queue = JobQueue(options: settings.options, concurrency: settings.concurrency, keptJobs: settings.keptJobs)
for _ in 0..<settings.initialJobs { queue.add(settings.work) }

/// The one user of this example. A real application has its own store of users.
struct User: Sendable {
    let name: String
}

let users = ["ada": (password: "lovelace", token: "ada-token")]

typealias AppContext = BasicSessionRequestContext<String, User>
let router = Router(context: AppContext.self)
router.get("health") { _, _ in "ok" }

// The application's authentication, in front of its API and of the progress routes.
let sessions = MemoryPersistDriver()
let api: RouterGroup<AppContext>
let progress: RouterGroup<AppContext>
switch settings.auth {
case .cookie:
    router.add(middleware: SessionMiddleware(storage: sessions))
    router.add(middleware: SessionAuthenticator { (name: String, _) in users[name].map { _ in User(name: name) } })
    router.post("login") { request, context -> Response in
        struct Login: Decodable {
            let user: String
            let password: String
        }
        let login = try await URLEncodedFormDecoder().decode(Login.self, from: request, context: context)
        guard users[login.user]?.password == login.password else { throw HTTPError(.unauthorized) }
        context.sessions.createSession(login.user)
        return .redirect(to: "/", type: .found)
    }
    api = router.group("api").add(middleware: IsAuthenticatedMiddleware())
    progress = router.group("progress").add(middleware: IsAuthenticatedMiddleware())
case .bearer:
    let bearer = ClosureAuthenticator<AppContext> { request, _ in
        guard let token = request.headers.bearer?.token else { return nil }
        return users.first { $0.value.token == token }.map { User(name: $0.key) }
    }
    let tickets = ProgressStreamTickets<User>(isCookieSecure: settings.secureCookies)
    api = router.group("api").add(middleware: bearer).add(middleware: IsAuthenticatedMiddleware())
    // The progress routes take a ticket (redeemed for a cookie of the page's path) or a bearer token.
    progress = router.group("progress").add(middleware: tickets.middleware { $0.identity = $1 })
        .add(middleware: bearer).add(middleware: IsAuthenticatedMiddleware())
    api.post("jobs/{id}/ticket") { _, context -> TicketAnswer in
        guard let id = context.parameters.get("id", as: Int.self), queue.job(id) != nil else {
            throw HTTPError(.notFound)
        }
        let path = "/progress/jobs/\(id)/"
        return TicketAnswer(page: path + "?ticket=" + tickets.issue(for: try context.requireIdentity(), path: path))
    }
    api.post("all/ticket") { _, context -> TicketAnswer in
        let path = "/progress/all/"
        return TicketAnswer(page: path + "?ticket=" + tickets.issue(for: try context.requireIdentity(), path: path))
    }
case .none:
    api = router.group("api")
    progress = router.group("progress")
}

/// The answer of a ticket route: the page to open.
struct TicketAnswer: ResponseEncodable {
    let page: String
}

/// A job, as the API lists it.
struct JobAnswer: ResponseEncodable {
    let id: Int
    let name: String
    let page: String
}

router.get("/") { _, context -> Response in
    let signedIn = settings.auth == .none || context.identity != nil
    return HomePage.response(jobs: queue.jobs, auth: settings.auth.rawValue, signedIn: signedIn)
}
api.get("jobs") { _, _ in
    queue.jobs.map { JobAnswer(id: $0.id, name: $0.node.localizedDescription, page: "/progress/jobs/\($0.id)/") }
}
api.post("jobs") { request, context -> JobAnswer in
    struct NewJob: Decodable {
        var images: Int?
    }
    var job = settings.work
    if let images = (try? await request.decode(as: NewJob.self, context: context))?.images {
        guard (0...10_000).contains(images) else { throw HTTPError(.badRequest, message: "images: 0 to 10000") }
        job.images = images
    }
    let added = queue.add(job)
    return JobAnswer(id: added.id, name: added.node.localizedDescription, page: "/progress/jobs/\(added.id)/")
}
// Each job's tree at a path of the application's choosing, behind its authentication.
progress.group("jobs/{id}").addProgressRoutes { _, context in
    context.parameters.get("id", as: Int.self).flatMap { queue.job($0)?.routes }
}
progress.group("all").addProgressRoutes(queue.allRoutes)

var logger = Logger(label: "jobs-app")
logger.logLevel = .warning
let application = Application(
    router: router, configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: settings.port)),
    services: [sessions],
    onServerRunning: { channel in
        // The first line on standard output, written at once.
        let url = "http://127.0.0.1:\(channel.localAddress?.port ?? 0)/\n"
        _ = url.withCString { write(1, $0, strlen($0)) }
    }, logger: logger)
do {
    try await application.runService()
} catch {
    printError("jobs-app: \(error)\n")
    exit(1)
}
