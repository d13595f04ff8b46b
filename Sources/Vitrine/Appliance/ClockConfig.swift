import VitrineCore

/// The config's `clock` object: where chronyd takes the time from, and whether this box serves it
/// to the others on its LAN (docs/sync.md, "Clocks").
///
/// ```json
/// "clock": { "servers": ["10.0.0.5", "ntp.example.net"],
///            "serve": { "allow": ["10.0.0.0/24"], "localStratum": 8 } }
/// ```
/// Without a `clock` object (or without `servers`), chronyd keeps Debian's default, the
/// `2.debian.pool.ntp.org` pool. `vitrine chrony-config` writes the chrony lines (`chronyFragment`)
/// to `/run/vitrine-chrony/vitrine.conf` before chrony.service starts.
public struct ClockConfig: Sendable, Equatable {
    /// The NTP servers (or other boxes) to follow, host names or addresses (`server NAME iburst`);
    /// nil: Debian's pool. An empty list: no upstream at all (a box that serves its own clock).
    public var servers: [String]?
    /// Serving time to the LAN (`serve`); nil: this box answers no NTP client.
    public var serve: Serve?

    /// `clock.serve`: chronyd answers NTP requests from these networks, and keeps serving its own
    /// clock at `localStratum` when it has no source of its own (chrony's `allow` and `local stratum`).
    public struct Serve: Sendable, Equatable {
        /// Addresses or CIDR networks (`10.0.0.0/24`, `192.168.1.17`, `fd00::/8`) that may ask.
        public var allow: [String]
        /// The stratum advertised while free-running on the local clock, 1…15 (chrony's default 10).
        public var localStratum: Int

        public init(allow: [String], localStratum: Int = Serve.defaultLocalStratum) {
            self.allow = allow
            self.localStratum = localStratum
        }

        public static let defaultLocalStratum = 10
    }

    public init(servers: [String]? = nil, serve: Serve? = nil) {
        self.servers = servers
        self.serve = serve
    }

    /// At most this many servers or allow entries.
    public static let maximumEntries = 32
    /// Debian's default source (its /etc/chrony/chrony.conf), kept when the config names no servers.
    public static let debianPool = "pool 2.debian.pool.ntp.org iburst"

    /// The chrony directives for this config, one a line, ending in a newline: `server NAME iburst`
    /// for each server (or Debian's `pool` line when `servers` is nil), then, with `serve`, `allow`
    /// for each entry and `local stratum N`. The values were checked by `parse`; `source` names
    /// the config file in the comment heading the lines.
    public static func chronyFragment(for clock: ClockConfig?, source: String = "/etc/vitrine/config.json") -> String {
        var lines = ["# Written by `vitrine chrony-config` from \(source) (clock) at every boot;",
                     "# chronyd reads it through /etc/chrony/chrony.conf (confdir /run/vitrine-chrony). Do not edit."]
        if let servers = clock?.servers {
            if servers.isEmpty { lines.append("# clock.servers is empty: no upstream source") }
            lines += servers.map { "server \($0) iburst" }
        } else {
            lines.append(debianPool)
        }
        if let serve = clock?.serve {
            lines += serve.allow.map { "allow \($0)" }
            lines.append("local stratum \(serve.localStratum)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Parses the `clock` object, adding `clock.…: reason` problems.
    static func parse(_ value: JSONValue, problems: inout [String]) -> ClockConfig? {
        guard case let .object(members) = value else { problems.append("clock: expected an object"); return nil }
        var c = ClockConfig()
        for (k, v) in members {
            let at = JSONPath.member("clock", k)
            switch k {
            case "servers":
                if case .null = v { continue }
                guard case let .array(items) = v, items.count <= maximumEntries else {
                    problems.append("\(at): expected an array of at most \(maximumEntries) host names or addresses, or null"); continue
                }
                var servers: [String] = []
                for (i, item) in items.enumerated() {
                    guard case let .string(name) = item, isHostOrAddress(name) else {
                        problems.append("\(at)[\(i)]: expected a host name or address such as \"10.0.0.5\" or \"ntp.example.net\" "
                                        + "(letters, digits, '.', '-', '_', ':', at most 253 characters; no spaces or control characters)")
                        continue
                    }
                    if servers.contains(name) { problems.append("\(at)[\(i)]: \(JSONPath.quoted(name)) is listed twice"); continue }
                    servers.append(name)
                }
                c.servers = servers
            case "serve":
                if case .null = v { continue }
                guard case let .object(inner) = v else { problems.append("\(at): expected an object ({\"allow\": [\"10.0.0.0/24\"]}) or null"); continue }
                var serve = Serve(allow: [])
                var allowGiven = false
                for (sk, sv) in inner {
                    let sat = JSONPath.member(at, sk)
                    switch sk {
                    case "allow":
                        allowGiven = true
                        guard case let .array(items) = sv, !items.isEmpty, items.count <= maximumEntries else {
                            problems.append("\(sat): expected an array of 1 to \(maximumEntries) addresses or networks such as \"10.0.0.0/24\""); continue
                        }
                        for (i, item) in items.enumerated() {
                            guard case let .string(text) = item, isAddressOrNetwork(text) else {
                                problems.append("\(sat)[\(i)]: expected an IPv4 or IPv6 address, or a network in CIDR form "
                                                + "such as \"10.0.0.0/24\" or \"fd00::/8\"")
                                continue
                            }
                            serve.allow.append(text)
                        }
                    case "localStratum":
                        guard case let .number(n) = sv, let i = n.intValue, (1...15).contains(i) else {
                            problems.append("\(sat): expected an integer stratum from 1 to 15"); continue
                        }
                        serve.localStratum = i
                    default: problems.append("\(sat): unknown field \(JSONPath.quoted(sk))")
                    }
                }
                if !allowGiven {
                    problems.append("\(at).allow: required: the addresses or networks that may ask this box for the time, such as [\"10.0.0.0/24\"]")
                }
                c.serve = serve
            default: problems.append("\(at): unknown field \(JSONPath.quoted(k))")
            }
        }
        return c
    }

    /// A DNS name (labels of letters, digits, '-' and '_', 1…63 bytes, joined by dots, 253 bytes at
    /// most, not starting with '-') or an IPv4 or IPv6 address: what chronyd takes as a `server`.
    static func isHostOrAddress(_ text: String) -> Bool {
        if isIPv4(text) || isIPv6(text) { return true }
        let bytes = Array(text.utf8)
        guard (1...253).contains(bytes.count), bytes.first != UInt8(ascii: "-") else { return false }
        var name = Substring(text)
        if name.hasSuffix(".") { name.removeLast() }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        return labels.allSatisfy { label in
            (1...63).contains(label.utf8.count) && label.utf8.allSatisfy { b in
                (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2D || b == 0x5F
            }
        } && !labels.allSatisfy { $0.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }  // 10.0.0.256 is no name
    }

    /// An IPv4 or IPv6 address, optionally followed by `/` and a prefix length (0…32, 0…128).
    static func isAddressOrNetwork(_ text: String) -> Bool {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        let address = String(parts[0])
        let limit: Int
        if isIPv4(address) { limit = 32 } else if isIPv6(address) { limit = 128 } else { return false }
        guard parts.count == 2 else { return true }
        let prefix = parts[1]
        guard (1...3).contains(prefix.count), prefix.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let n = Int(prefix) else { return false }
        return n <= limit
    }

    /// Dotted decimal, four numbers 0…255 without leading zeros (`10.0.0.5`).
    static func isIPv4(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { p in
            (1...3).contains(p.count) && p.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } && (p.count == 1 || p.first != "0")
                && Int(p)! <= 255
        }
    }

    /// RFC 4291 text: eight groups of 1…4 hex digits, one `::` standing for one or more zero groups,
    /// the last 32 bits possibly in dotted decimal (`::ffff:10.0.0.5`). No zone (`%eth0`).
    static func isIPv6(_ text: String) -> Bool {
        guard text.contains(":"), text.utf8.count <= 45 else { return false }
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return false }
        var groups = 0
        for (h, half) in halves.enumerated() {
            if half.isEmpty { continue }
            let fields = half.split(separator: ":", omittingEmptySubsequences: false)
            for (i, f) in fields.enumerated() {
                if h == halves.count - 1, i == fields.count - 1, f.contains(".") {
                    guard isIPv4(String(f)) else { return false }
                    groups += 2
                    continue
                }
                guard (1...4).contains(f.count), f.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x46) || ($0 >= 0x61 && $0 <= 0x66) }) else { return false }
                groups += 1
            }
        }
        return halves.count == 2 ? groups <= 7 : groups == 8
    }
}
