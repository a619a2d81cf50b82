#if canImport(Glibc)
import Glibc
#endif

/// This process's user + system CPU time so far, in seconds.
enum ProcessCPU {
    static var seconds: Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
