@main struct Fetch { static func main() {} }
