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
        .systemLibrary(name: "CFileIO"),
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),

        // Swift bindings: the only modules that touch C.
        .target(name: "Media", dependencies: ["CAVUtil", "CAVCodec", "CAVFormat", "CSwScale", "CSwResample"]),
        .target(name: "KMS", dependencies: ["CDRM"]),
        .target(name: "PCM", dependencies: ["CALSA"]),
        .target(name: "Canvas", dependencies: ["CCairo"]),
        .target(name: "ServiceManager", dependencies: ["CSystemd"]),
        .target(name: "Touch", dependencies: ["CInput"]),
        // inotify(7) through Glibc: the USB stick folder and import requests.
        .target(name: "Inotify"),
        .target(name: "Crypto", dependencies: ["CSodium"]),
        // POSIX file calls (open, read, write, fsync, rename, flock, statvfs) with typed errors.
        .target(name: "FileIO", dependencies: ["CFileIO"]),

        // Pure Swift: manifest, validation, geometry and clock maths.
        .target(name: "VitrineCore"),

        // The catalog library on disk (generations, current/previous) and USB stick imports.
        .target(name: "CatalogStore", dependencies: ["VitrineCore", "Crypto", "FileIO"]),

        // The engine: player, compositor, outputs, run loop.
        .target(name: "Vitrine", dependencies: ["VitrineCore", "CatalogStore", "Crypto", "Media", "KMS", "PCM", "Canvas",
                                                "ServiceManager", "Touch", "Inotify", "FileIO"]),

        .executableTarget(name: "vitrine", dependencies: ["Vitrine", "VitrineCore", "CatalogStore", "FileIO", "Media", "Crypto"]),
        // Prints every libinput event as one line: the VM touch test (tools/vm/touch-test) reads it.
        .executableTarget(name: "touch-probe", dependencies: ["Touch"]),

        // For the tests only: one subprocess runner (stdout and stderr drained at once), and where the
        // vitrine binary and the real media corpus are.
        .target(name: "VitrineTestSupport", path: "Tests/VitrineTestSupport"),

        .testTarget(name: "VitrineTestSupportTests", dependencies: ["VitrineTestSupport"]),
        .testTarget(name: "VitrineCoreTests", dependencies: ["VitrineCore", "VitrineTestSupport"]),
        .testTarget(name: "MediaTests", dependencies: ["Media", "VitrineTestSupport"]),
        .testTarget(name: "PCMTests", dependencies: ["PCM"]),
        .testTarget(name: "CanvasTests", dependencies: ["Canvas"]),
        .testTarget(name: "TouchTests", dependencies: ["Touch"]),
        .testTarget(name: "InotifyTests", dependencies: ["Inotify"]),
        .testTarget(name: "CryptoTests", dependencies: ["Crypto", "VitrineTestSupport"]),
        .testTarget(name: "CatalogStoreTests", dependencies: ["CatalogStore", "VitrineCore", "Crypto", "FileIO", "VitrineTestSupport"]),
        .testTarget(name: "VitrineTests", dependencies: ["Vitrine", "VitrineCore", "CatalogStore", "Media", "VitrineTestSupport"]),
    ]
)
