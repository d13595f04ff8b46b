// A real nginx (Debian's nginx-light, installed by tools/setup) on loopback ports chosen at random,
// serving a temporary folder over HTTPS with a certificate of a throwaway CA made by the openssl CLI.
// Shared by HTTPFetchTests and the player's network update tests (VitrineTests).
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Why the test server could not be set up.
public struct NginxError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

public enum NginxAvailability {
    public static let path = "/usr/sbin/nginx"
    public static var installed: Bool { FileManager.default.isExecutableFile(atPath: path) && FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") }
    public static let absent: Comment = "nginx is not installed: run tools/setup"
}

/// One nginx process (`daemon off; master_process off`) with everything it writes (pid, logs,
/// temp folders) in its own temporary folder, and three listeners on 127.0.0.1:
/// - `port`: HTTPS with a certificate for `localhost` and `127.0.0.1` signed by `caFile`;
/// - `wrongHostPort`: HTTPS with a certificate of the same CA for `wrong.invalid`;
/// - `plainPort`: plain HTTP.
///
/// Each serves `root` at `/catalog/`, and the same folder at `/slow/` (`limit_rate 100`: 100 bytes
/// per second) and `/throttled/` (`limit_rate 512k`); `/fail500/` answers 500, and `/media500/`
/// serves `root` but answers 500 for everything under its `media/`. `stop()` sends SIGTERM to the
/// PID and waits; `start()` starts it again on the same ports (a server restart); `pause()` and
/// `resume()` send SIGSTOP and SIGCONT (a server that stalls: connections stay open, nothing comes).
public final class NginxServer: @unchecked Sendable {  // used from the test's thread, and from a progress callback on it
    public let folder: String
    /// The folder served at `/catalog/`.
    public let root: String
    /// The test CA's certificate (PEM), for `FetchSettings.caFile`.
    public let caFile: String
    public private(set) var port: Int32 = 0
    public private(set) var wrongHostPort: Int32 = 0
    public private(set) var plainPort: Int32 = 0
    private var process: RunningProcess?

    public init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-nginx-\(UUID().uuidString)").path
        root = folder + "/www"
        caFile = folder + "/ca.crt"
        for sub in ["www", "tmp", "logs"] {
            try FileManager.default.createDirectory(atPath: folder + "/" + sub, withIntermediateDirectories: true)
        }
        try makeCertificates()
        var lastError = ""
        for _ in 0..<5 {
            port = Int32(try LoopbackPort.free())
            wrongHostPort = Int32(try LoopbackPort.free())
            plainPort = Int32(try LoopbackPort.free())
            if wrongHostPort == port || plainPort == port || plainPort == wrongHostPort { continue }
            try writeConfig()
            do { try start(); return } catch let error as NginxError {
                lastError = error.description
                if !lastError.contains("Address already in use") { throw error }
            }
        }
        throw NginxError("nginx did not start: \(lastError)")
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// `https://localhost:<port>/catalog/`.
    public var catalogURL: String { "https://localhost:\(port)/catalog/" }
    public func url(_ location: String, _ path: String) -> String { "https://localhost:\(port)/\(location)/\(path)" }

    /// Whether nginx runs (started and not stopped).
    public var isRunning: Bool { process?.isRunning ?? false }

    /// The lines of the access log (`$request $status $body_bytes_sent`) naming `path`.
    /// The access log's lines that contain `path`. nginx writes a request's line after it has sent
    /// the response, so a client may get there first: this reads the log once it has not grown for
    /// 100 ms (2 s at most).
    public func accessLog(containing path: String) -> [String] {
        let file = folder + "/logs/access.log"
        func read() -> String { (try? String(contentsOfFile: file, encoding: .utf8)) ?? "" }
        let deadline = Date(timeIntervalSinceNow: 2)
        var text = read()
        while Date() < deadline {
            Thread.sleep(forTimeInterval: 0.1)
            let again = read()
            if again == text { break }
            text = again
        }
        return text.split(separator: "\n").map(String.init).filter { $0.contains(path) }
    }

    /// Writes `bytes` to `root/relative`, making folders.
    public func put(_ relative: String, _ bytes: [UInt8]) throws {
        let path = root + "/" + relative
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// Starts nginx on the chosen ports and waits until the HTTPS port accepts connections.
    public func start() throws {
        precondition(process == nil, "nginx already running")
        let child = try Subprocess.start(NginxAvailability.path, ["-p", folder, "-c", folder + "/nginx.conf", "-e", folder + "/logs/error.log"])
        let ports = [port, wrongHostPort, plainPort].map { Int($0) }
        switch child.waitUntilReady(seconds: 10, interval: .milliseconds(20), { ports.allSatisfy(LoopbackPort.accepts) }) {
        case .ready: process = child
        case .exited(let result):
            let log = (try? String(contentsOfFile: folder + "/logs/error.log", encoding: .utf8)) ?? ""
            throw NginxError("nginx exited (\(result.status)): \(result.err) \(log)")
        case .timedOut: throw NginxError("nginx did not accept on 127.0.0.1:\(port) within 10 s")
        }
    }

    /// SIGSTOP to nginx's PID: it stalls (connections stay open, nothing is sent or accepted) until `resume()`.
    public func pause() { process?.send(SIGSTOP) }

    /// SIGCONT to nginx's PID after `pause()`.
    public func resume() { process?.send(SIGCONT) }

    /// SIGTERM to nginx's PID (a fast shutdown: open connections are closed at once), then waits.
    public func stop() {
        guard let child = process else { return }
        process = nil
        child.send(SIGTERM)
        child.wait(timeout: .seconds(10))
    }

    // MARK: - Setup

    private func makeCertificates() throws {
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try Subprocess.output("/usr/bin/openssl", ["req", "-x509"] + ec + [
            "-keyout", folder + "/ca.key", "-out", caFile, "-days", "2", "-subj", "/CN=Vitrine Test CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
        for (name, san) in [("server", "DNS:localhost,IP:127.0.0.1"), ("wrong", "DNS:wrong.invalid")] {
            try Subprocess.output("/usr/bin/openssl", ["req"] + ec + [
                "-keyout", "\(folder)/\(name).key", "-out", "\(folder)/\(name).csr", "-subj", "/CN=\(name)"])
            let extensions = "\(folder)/\(name).ext"
            try "subjectAltName=\(san)\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n"
                .write(toFile: extensions, atomically: true, encoding: .utf8)
            try Subprocess.output("/usr/bin/openssl", ["x509", "-req", "-in", "\(folder)/\(name).csr", "-CA", caFile,
                "-CAkey", folder + "/ca.key", "-CAcreateserial", "-out", "\(folder)/\(name).crt", "-days", "2", "-extfile", extensions])
        }
    }

    private func writeConfig() throws {
        let f = folder
        let locations = """
                root \(f)/www;
                location /catalog/ { alias \(f)/www/; }
                location /slow/ { alias \(f)/www/; limit_rate 100; }
                location /throttled/ { alias \(f)/www/; limit_rate 512k; }
                location /fail500/ { return 500; }
                location /media500/ { alias \(f)/www/; }
                location /media500/media/ { return 500; }
        """
        let config = """
        daemon off;
        master_process off;
        worker_processes 1;
        pid \(f)/nginx.pid;
        error_log \(f)/logs/error.log info;
        events { worker_connections 64; }
        http {
            log_format brief '$request $status $body_bytes_sent';
            access_log \(f)/logs/access.log brief;
            client_body_temp_path \(f)/tmp/body;
            proxy_temp_path \(f)/tmp/proxy;
            fastcgi_temp_path \(f)/tmp/fastcgi;
            uwsgi_temp_path \(f)/tmp/uwsgi;
            scgi_temp_path \(f)/tmp/scgi;
            default_type application/octet-stream;
            types { application/json json; }
            sendfile on;
            keepalive_timeout 30;
            server {
                listen 127.0.0.1:\(port) ssl;
                ssl_certificate \(f)/server.crt;
                ssl_certificate_key \(f)/server.key;
        \(locations)
            }
            server {
                listen 127.0.0.1:\(wrongHostPort) ssl;
                ssl_certificate \(f)/wrong.crt;
                ssl_certificate_key \(f)/wrong.key;
        \(locations)
            }
            server {
                listen 127.0.0.1:\(plainPort);
        \(locations)
            }
        }

        """
        try config.write(toFile: f + "/nginx.conf", atomically: true, encoding: .utf8)
    }
}
