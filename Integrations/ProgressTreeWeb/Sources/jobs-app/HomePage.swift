import Hummingbird

/// The application's own home page at `/`: its jobs with links to their progress pages, or the login form.
/// It is the application's, not the library's: the progress pages live at `/progress/…` beside it.
enum HomePage {
    static func response(jobs: [JobQueue.Job], auth: String, signedIn: Bool) -> Response {
        var body = "<h1>Jobs</h1>\n"
        if !signedIn && auth == "cookie" {
            body += """
                <form method="post" action="login">
                <p><label>User <input name="user" autocomplete="username"></label></p>
                <p><label>Password <input name="password" type="password" autocomplete="current-password"></label></p>
                <p><button type="submit">Log in</button></p>
                </form>

                """
        } else if !signedIn {
            body +=
                "<p>This application takes bearer tokens: <code>POST /api/jobs/ID/ticket</code> with "
                + "<code>Authorization: Bearer …</code> names the page to open.</p>\n"
        } else {
            body += "<ul>\n<li><a href=\"progress/all/\">All jobs</a></li>\n"
            for job in jobs {
                body += "<li><a href=\"progress/jobs/\(job.id)/\">\(escaped(job.node.localizedDescription))</a></li>\n"
            }
            body += "</ul>\n"
        }
        let html = """
            <!doctype html>
            <html lang="en">
            <head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Jobs</title><link rel="icon" href="data:,"></head>
            <body>
            \(body)</body>
            </html>

            """
        return Response(
            status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }

    private static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "&": out += "&amp;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}
