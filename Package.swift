// swift-tools-version:6.0
// Vitrine: a signage and kiosk playback appliance for Linux (FFmpeg → DRM/KMS, ALSA).
import PackageDescription

let package = Package(
    name: "Vitrine",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "vitrine", targets: ["vitrine"]),
    ],
    targets: [
        // Thin C modules: system libraries reached through pkg-config, plus header-only shims
        // for the macros Swift cannot import.
        .systemLibrary(name: "CAVUtil", pkgConfig: "libavutil", providers: [.apt(["libavutil-dev"])]),
        .systemLibrary(name: "CAVCodec", pkgConfig: "libavcodec", providers: [.apt(["libavcodec-dev"])]),
        .systemLibrary(name: "CAVFormat", pkgConfig: "libavformat", providers: [.apt(["libavformat-dev"])]),
        .systemLibrary(name: "CSwScale", pkgConfig: "libswscale", providers: [.apt(["libswscale-dev"])]),
        .systemLibrary(name: "CSwResample", pkgConfig: "libswresample", providers: [.apt(["libswresample-dev"])]),
        .systemLibrary(name: "CDRM", pkgConfig: "libdrm", providers: [.apt(["libdrm-dev"])]),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CCairo", pkgConfig: "pangocairo", providers: [.apt(["libpango1.0-dev", "libcairo2-dev"])]),
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(name: "CInput", pkgConfig: "libinput", providers: [.apt(["libinput-dev", "libudev-dev"])]),
        .systemLibrary(name: "CUdev", pkgConfig: "libudev", providers: [.apt(["libudev-dev"])]),
        .systemLibrary(name: "CFileIO"),
        .systemLibrary(name: "CRunLoop"),
        .target(name: "CControlSocket"),
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CCEC", pkgConfig: "libcec", providers: [.apt(["libcec-dev", "libp8-platform-dev"])]),
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CTimex"),

        // Beneath the bindings: the one Errno type and its text, the C-call gateway (EINTR, bugs),
        // the fault-injection seam of the tests (debug builds), the monotonic clock and the wall clock.
        .target(name: "SystemSupport"),

        // Swift bindings: the only modules that touch C.
        .target(name: "Media", dependencies: ["CAVUtil", "CAVCodec", "CAVFormat", "CSwScale", "CSwResample"]),
        .target(name: "KMS", dependencies: ["CDRM", "SystemSupport"]),
        .target(name: "PCM", dependencies: ["CALSA", "SystemSupport"]),
        .target(name: "Canvas", dependencies: ["CCairo"]),
        .target(name: "ServiceManager", dependencies: ["CSystemd"]),
        .target(name: "Touch", dependencies: ["CInput", "SystemSupport"]),
        // inotify(7) through Glibc: the USB stick folder and import requests.
        .target(name: "Inotify", dependencies: ["SystemSupport"]),
        // Minisign (Ed25519, BLAKE2b) through libsodium; SHA-256 through OpenSSL's libcrypto.
        .target(name: "Crypto", dependencies: ["CSodium", "COpenSSL"]),
        // POSIX file calls (open, read, write, fsync, rename, flock, statvfs, atomic writes) and the
        // process identity, with typed errors.
        .target(name: "FileIO", dependencies: ["CFileIO", "SystemSupport"]),
        // The event loop: epoll, timerfd, eventfd and signalfd through Glibc and SystemSupport's
        // gateway, one thread per loop.
        .target(name: "RunLoop", dependencies: ["CRunLoop", "SystemSupport"]),
        // DRM hot-plug uevents (change, HOTPLUG=1) through a libudev netlink monitor on the event loop.
        // Its own module, not KMS: KMS stays free of the run loop and of libudev. See docs/hotplug.md.
        .target(name: "Hotplug", dependencies: ["CUdev", "RunLoop", "SystemSupport"]),
        // HDMI-CEC through libcec: the TV's standby and power-on.
        .target(name: "CEC", dependencies: ["CCEC"]),
        // Fleet status and commands over MQTT through libmosquitto, driven by the event loop
        // (no thread of libmosquitto's own).
        .target(name: "MQTT", dependencies: ["CMosquitto", "RunLoop", "SystemSupport"]),
        // The local control socket (/run/vitrine/control.sock): newline-delimited JSON requests and
        // replies in the style of mpv's IPC, on the event loop, and its blocking client. See docs/control.md.
        .target(name: "ControlSocket", dependencies: ["CControlSocket", "RunLoop", "SystemSupport", "VitrineCore"]),
        // HTTPS downloads through libcurl (conditional GETs, Range resume, SHA-256 while writing) and
        // the catalog poller over an `update.url` folder. See docs/network.md.
        .target(name: "HTTPFetch", dependencies: ["CCurl", "Crypto", "FileIO", "SystemSupport"]),
        // The kernel's NTP state of the wall clock (adjtimex(2), read only): synchronized or not,
        // offset, errors, frequency, for the status. See docs/sync.md.
        .target(name: "ClockSync", dependencies: ["CTimex", "SystemSupport"]),

        // Pure Swift: manifest, validation, geometry and clock maths.
        .target(name: "VitrineCore"),

        // The catalog library on disk (generations, current/previous) and USB stick imports.
        .target(name: "CatalogStore", dependencies: ["VitrineCore", "Crypto", "FileIO", "SystemSupport"]),

        // The engine: player, compositor, outputs, run loop; USB and network catalog updates.
        .target(name: "Vitrine", dependencies: ["VitrineCore", "CatalogStore", "Crypto", "Media", "KMS", "PCM", "Canvas",
                                                "ServiceManager", "Touch", "Inotify", "FileIO", "RunLoop", "CEC", "SystemSupport", "Hotplug",
                                                "ControlSocket", "MQTT", "HTTPFetch", "ClockSync"]),

        .executableTarget(name: "vitrine", dependencies: ["Vitrine", "VitrineCore", "CatalogStore", "FileIO", "Media", "Crypto", "RunLoop", "Inotify",
                                                          "ControlSocket", "HTTPFetch"]),
        // Prints every libinput event as one line: the VM touch test (tools/vm/touch-test) reads it.
        .executableTarget(name: "touch-probe", dependencies: ["Touch"]),
        // An event loop with one timer or one signal handler: its idle CPU is measured with
        // /usr/bin/time, and RunLoopTests send it a process-directed SIGHUP.
        .executableTarget(name: "runloop-probe", dependencies: ["RunLoop"]),
        // A headless box on MQTT: retained status, answers `status` commands (MQTTTests runs 50).
        .executableTarget(name: "mqtt-probe", dependencies: ["MQTT", "RunLoop"]),
        // libFuzzer targets (tools/fuzz builds them with -sanitize=fuzzer,address -D FUZZING; a plain
        // build makes replay tools that run saved inputs once). See docs/fuzzing.md.
        .systemLibrary(name: "CFuzzer"),
        .target(name: "FuzzSupport", dependencies: ["CFuzzer"]),
        .executableTarget(name: "fuzz-media", dependencies: ["FuzzSupport", "Media", "VitrineCore"]),
        .executableTarget(name: "fuzz-manifest", dependencies: ["FuzzSupport", "VitrineCore"]),

        // For the tests only: one subprocess runner (stdout and stderr drained at once, lines timed on
        // the monotonic clock, bounded waits), and where the built executables, the vitrine binary and
        // the real media corpus are.
        .target(name: "VitrineTestSupport", dependencies: ["SystemSupport"], path: "Tests/VitrineTestSupport"),

        .testTarget(name: "VitrineTestSupportTests", dependencies: ["VitrineTestSupport"]),
        .testTarget(name: "SystemSupportTests", dependencies: ["SystemSupport"]),
        .testTarget(name: "VitrineCoreTests", dependencies: ["VitrineCore", "VitrineTestSupport"]),
        .testTarget(name: "KMSTests", dependencies: ["KMS"]),
        .testTarget(name: "HotplugTests", dependencies: ["Hotplug", "RunLoop", "SystemSupport"]),
        .testTarget(name: "FileIOTests", dependencies: ["FileIO"]),
        .testTarget(name: "MediaTests", dependencies: ["Media", "VitrineTestSupport"], exclude: ["Fixtures"]),
        .testTarget(name: "PCMTests", dependencies: ["PCM", "SystemSupport"]),
        .testTarget(name: "CanvasTests", dependencies: ["Canvas"]),
        .testTarget(name: "TouchTests", dependencies: ["Touch", "SystemSupport"]),
        .testTarget(name: "InotifyTests", dependencies: ["Inotify"]),
        .testTarget(name: "CECTests", dependencies: ["CEC"]),
        .testTarget(name: "MQTTTests", dependencies: ["MQTT", "RunLoop", "SystemSupport", "VitrineTestSupport", "mqtt-probe"]),
        .testTarget(name: "HTTPFetchTests", dependencies: ["HTTPFetch", "Crypto", "FileIO", "SystemSupport", "VitrineTestSupport"]),
        .testTarget(name: "ControlSocketTests", dependencies: ["ControlSocket", "RunLoop", "SystemSupport", "VitrineCore",
                                                             "VitrineTestSupport", "vitrine"]),
        .testTarget(name: "RunLoopTests", dependencies: ["RunLoop", "Inotify", "FileIO", "SystemSupport", "VitrineTestSupport", "runloop-probe"]),
        .testTarget(name: "CryptoTests", dependencies: ["Crypto", "VitrineTestSupport"]),
        .testTarget(name: "CatalogStoreTests", dependencies: ["CatalogStore", "VitrineCore", "Crypto", "FileIO", "SystemSupport", "VitrineTestSupport"]),
        .testTarget(name: "ClockSyncTests", dependencies: ["ClockSync", "Vitrine", "VitrineCore", "SystemSupport", "VitrineTestSupport", "vitrine"]),
        .testTarget(name: "VitrineTests", dependencies: ["Vitrine", "CEC", "VitrineCore", "CatalogStore", "Media", "RunLoop", "SystemSupport", "VitrineTestSupport",
                                                       "ControlSocket", "HTTPFetch", "Crypto", "FileIO"]),
    ]
)
