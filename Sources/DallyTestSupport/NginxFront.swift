import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real nginx (the Debian package) in front of cloud nodes, as docs/OPERATIONS.md sets it up:
/// an upstream of the nodes, proxied with HTTP/1.1 keep-alive and the documented timeouts,
/// on a free port on 127.0.0.1, its configuration, logs and temporary files in its own
/// directory. Stopped (and waited for) by ``stop()``.
///
/// ```swift
/// let front = try await NginxFront.start(upstreams: ["127.0.0.1:8090"], directory: dir)
/// // gateways use front.url
/// front.stop()
/// ```
public final class NginxFront: Sendable {
    public let port: Int
    public let directory: String
    private let process: SpawnedProcess

    public var url: String { "http://127.0.0.1:\(port)" }

    /// The nginx executable, when the package is installed.
    public static var executable: String? {
        ["/usr/sbin/nginx", "/usr/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    private init(port: Int, directory: String, process: SpawnedProcess) {
        self.port = port
        self.directory = directory
        self.process = process
    }

    /// Writes the configuration, starts nginx in the foreground and waits until its port
    /// takes connections (at most 20 s).
    public static func start(upstreams: [String], directory: String) async throws -> NginxFront {
        guard let nginx = executable else { throw TestSupportError("nginx is not installed (apt-get install nginx)") }
        try FileManager.default.createDirectory(atPath: directory + "/logs", withIntermediateDirectories: true)
        let port = try FreePort.find()
        let config = configuration(upstreams: upstreams, port: port, directory: directory)
        try config.write(toFile: directory + "/nginx.conf", atomically: true, encoding: .utf8)
        let process = try SpawnedProcess(
            nginx, ["-p", directory, "-c", directory + "/nginx.conf", "-e", directory + "/logs/error.log"],
            standardError: directory + "/logs/stderr.log")
        let front = NginxFront(port: port, directory: directory, process: process)
        for _ in 0..<400 {
            guard process.isRunning else {
                let log = (try? String(contentsOfFile: directory + "/logs/error.log", encoding: .utf8)) ?? ""
                throw TestSupportError("nginx exited at start: \(log.suffix(2_000))")
            }
            if Self.accepts(port: port) { return front }
            try await Task.sleep(for: .milliseconds(50))
        }
        front.stop()
        throw TestSupportError("nginx did not listen on 127.0.0.1:\(port) within 20 s")
    }

    /// Stops nginx at once and waits for it.
    public func stop() {
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }

    /// The configuration of docs/OPERATIONS.md, on loopback, with every path in `directory`.
    static func configuration(upstreams: [String], port: Int, directory: String) -> String {
        """
        \(getuid() == 0 ? "user root;" : "")
        daemon off;
        master_process on;
        worker_processes 1;
        pid \(directory)/nginx.pid;
        events { worker_connections 1024; }
        http {
            access_log \(directory)/logs/access.log;
            client_body_temp_path \(directory)/client_body;
            proxy_temp_path \(directory)/proxy;
            fastcgi_temp_path \(directory)/fastcgi;
            uwsgi_temp_path \(directory)/uwsgi;
            scgi_temp_path \(directory)/scgi;
            upstream dally_cloud {
        \(upstreams.map { "        server \($0) max_fails=1 fail_timeout=5s;" }.joined(separator: "\n"))
                keepalive 64;
            }
            server {
                listen 127.0.0.1:\(port);
                client_max_body_size 64m;
                location / {
                    proxy_pass http://dally_cloud;
                    proxy_http_version 1.1;
                    proxy_set_header Connection "";
                    proxy_set_header Host $host;
                    proxy_read_timeout 150s;
                    proxy_next_upstream error timeout http_502 http_503 http_504 non_idempotent;
                    proxy_request_buffering on;
                }
            }
        }
        """
    }

    private static func accepts(port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
