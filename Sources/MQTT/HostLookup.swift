// The broker's host name looked up on a thread of its own, so that getaddrinfo's wait for a DNS
// server never holds up the event loop.
#if canImport(Glibc)
internal import Glibc
#endif

/// `getaddrinfo` for a broker's host name, off the loop.
enum HostLookup {
    /// Whether `host` is a numeric IPv4 or IPv6 address (`inet_pton` accepts it for `AF_INET`
    /// or `AF_INET6`): libmosquitto's own `getaddrinfo` then returns at once, without a lookup.
    static func isNumericAddress(_ host: String) -> Bool {
        var buffer = (UInt64(0), UInt64(0))  // 16 bytes: room for an in6_addr.
        return withUnsafeMutableBytes(of: &buffer) { bytes in
            inet_pton(AF_INET, host, bytes.baseAddress) == 1 || inet_pton(AF_INET6, host, bytes.baseAddress) == 1
        }
    }

    /// Looks `host` up on a new detached thread (`getaddrinfo`, `AF_UNSPEC`, `SOCK_STREAM`) and
    /// calls `completion` on that thread: nil when it has at least one address, else the reason
    /// (`gai_strerror`, with `errno`'s text for `EAI_SYSTEM`). The thread ends after `completion`
    /// returns; nothing waits for it, and it lasts as long as `getaddrinfo` does (the
    /// `timeout` × `attempts` of resolv.conf(5) with a DNS server that does not answer).
    /// - Returns: nil once the thread runs, else why it could not be made (`pthread_create`'s error).
    /// The corresponding C functions are `pthread_create` and `getaddrinfo`.
    static func start(_ host: String, completion: @escaping @Sendable (_ failure: String?) -> Void) -> String? {
        let job = Unmanaged.passRetained(Job(host: host, completion: completion)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let code = pthread_create(&thread, &attributes, { context in
            Unmanaged<Job>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, job)
        guard code == 0 else {
            Unmanaged<Job>.fromOpaque(job).release()
            return "pthread_create: \(String(cString: strerror(code)))"
        }
        return nil
    }

    private final class Job: Sendable {
        let host: String
        let completion: @Sendable (String?) -> Void

        init(host: String, completion: @escaping @Sendable (String?) -> Void) {
            self.host = host
            self.completion = completion
        }

        func run() {
            var hints = addrinfo()
            hints.ai_family = AF_UNSPEC
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            var result: UnsafeMutablePointer<addrinfo>?
            let code = getaddrinfo(host, nil, &hints, &result)
            let failure: String?
            if code == 0 {
                failure = result == nil ? "no address" : nil
            } else if code == EAI_SYSTEM {
                failure = "\(String(cString: gai_strerror(code))): \(String(cString: strerror(errno)))"
            } else {
                failure = String(cString: gai_strerror(code))
            }
            if let result { freeaddrinfo(result) }
            completion(failure)
        }
    }
}
