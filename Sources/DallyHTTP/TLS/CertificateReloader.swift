import Logging
import ServiceLifecycle
import UnixSignals

/// Reloads a server's certificate on SIGHUP, as `systemctl reload` or a certificate renewal
/// hook asks (``ServerCertificates/reload()``). A failed reload is logged and the running
/// certificate kept.
public struct CertificateReloader: Service {
    let certificates: ServerCertificates
    let logger: Logger

    public init(certificates: ServerCertificates, logger: Logger) {
        self.certificates = certificates
        self.logger = logger
    }

    public func run() async throws {
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        for await _ in hangups.cancelOnGracefulShutdown() {
            do {
                try certificates.reload()
                logger.info("reloaded the TLS certificate", metadata: ["certificate": "\(certificates.certificatePath)"])
            } catch {
                logger.error(
                    "cannot reload the TLS certificate; keeping the one in use",
                    metadata: ["certificate": "\(certificates.certificatePath)", "error": "\(error)"])
            }
        }
    }
}
