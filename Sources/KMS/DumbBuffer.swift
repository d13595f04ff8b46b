// A dumb buffer: CPU-mapped memory the display can scan out, with its framebuffer id.
internal import CDRM
#if canImport(Glibc)
internal import Glibc
#endif

/// One XRGB8888 dumb buffer, mapped into memory and registered as a framebuffer.
///
/// Created as modetest's `buffers.c` does: `DRM_IOCTL_MODE_CREATE_DUMB`, `drmModeAddFB2`,
/// `DRM_IOCTL_MODE_MAP_DUMB` and `mmap`. `deinit` undoes all four in reverse order.
/// The mapping is often write-combined: write it sequentially, never read it back.
final class DumbBuffer {
    /// Keeps the file descriptor open for as long as the buffer lives.
    let device: KMSDevice
    let width: Int
    let height: Int
    let format: FourCC
    /// Bytes per row.
    let stride: Int
    /// The GEM handle of the buffer object.
    let handle: UInt32
    /// The framebuffer id to put on a plane or CRTC.
    let framebufferID: UInt32
    /// The mapping and its length in bytes (at least `stride * height`).
    let pixels: UnsafeMutableRawPointer
    let mappedSize: Int

    /// Creates, registers and maps a `width` x `height` XRGB8888 buffer, cleared to black.
    ///
    /// - Throws: `DRMError` from `DRM_IOCTL_MODE_CREATE_DUMB` (`ENOMEM`, `EINVAL` for a size the
    ///   driver refuses), `drmModeAddFB2`, `DRM_IOCTL_MODE_MAP_DUMB` or `mmap`. Whatever was
    ///   created before the failure is released.
    /// The corresponding C functions are `drmIoctl(DRM_IOCTL_MODE_CREATE_DUMB)`, `drmModeAddFB2`,
    /// `drmIoctl(DRM_IOCTL_MODE_MAP_DUMB)` and `mmap`.
    init(device: KMSDevice, width: Int, height: Int) throws(DRMError) {
        let fd = device.fd
        let format = FourCC.xrgb8888
        var create = drm_mode_create_dumb()
        create.width = UInt32(width)
        create.height = UInt32(height)
        create.bpp = 32
        try DRMCall.check("DRM_IOCTL_MODE_CREATE_DUMB(\(width)x\(height))") { vt_drm_create_dumb(fd, &create) }
        let handle = create.handle
        func destroyHandle() {
            var destroy = drm_mode_destroy_dumb()
            destroy.handle = handle
            _ = try? DRMCall.check("DRM_IOCTL_MODE_DESTROY_DUMB") { vt_drm_destroy_dumb(fd, &destroy) }
        }

        var framebufferID: UInt32 = 0
        do {
            let handles: [UInt32] = [handle, 0, 0, 0]
            let pitches: [UInt32] = [create.pitch, 0, 0, 0]
            let offsets: [UInt32] = [0, 0, 0, 0]
            try DRMCall.check("drmModeAddFB2(\(width)x\(height) \(format))") {
                drmModeAddFB2(fd, UInt32(width), UInt32(height), format.rawValue, handles, pitches, offsets,
                              &framebufferID, 0)
            }
        } catch {
            destroyHandle()
            throw error
        }

        let mapping: UnsafeMutableRawPointer
        do {
            var map = drm_mode_map_dumb()
            map.handle = handle
            try DRMCall.check("DRM_IOCTL_MODE_MAP_DUMB") { vt_drm_map_dumb(fd, &map) }
            let offset = map.offset
            var address: UnsafeMutableRawPointer?
            try DRMCall.check("mmap(\(create.size) bytes)") {
                address = mmap(nil, Int(create.size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, off_t(Int64(bitPattern: offset)))
                return address == nil || address == MAP_FAILED ? -1 : 0
            }
            mapping = address!
        } catch {
            _ = try? DRMCall.check("drmModeRmFB(\(framebufferID))") { drmModeRmFB(fd, framebufferID) }
            destroyHandle()
            throw error
        }

        self.device = device
        self.width = width
        self.height = height
        self.format = format
        self.stride = Int(create.pitch)
        self.handle = handle
        self.framebufferID = framebufferID
        self.pixels = mapping
        self.mappedSize = Int(create.size)
        memset(mapping, 0, mappedSize)  // XRGB 0x00000000 is black.
    }

    /// The visible pixels: `stride * height` bytes.
    var bytes: UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(start: pixels, count: min(stride * height, mappedSize))
    }

    /// Sets every pixel to `color` (a native-endian `0xXXRRGGBB` value).
    func fill(_ color: UInt32) {
        for row in 0..<height {
            (pixels + row * stride).bindMemory(to: UInt32.self, capacity: width).update(repeating: color, count: width)
        }
    }

    /// Unmaps, removes the framebuffer (if it is still on screen the kernel turns that plane off),
    /// and destroys the buffer object. Failures are ignored: nothing useful can be done about them here.
    /// The corresponding C functions are `munmap`, `drmModeRmFB` and `drmIoctl(DRM_IOCTL_MODE_DESTROY_DUMB)`.
    deinit {
        let fd = device.fd, pixels = pixels, size = mappedSize, framebufferID = framebufferID
        _ = try? DRMCall.check("munmap") { munmap(pixels, size) }
        _ = try? DRMCall.check("drmModeRmFB(\(framebufferID))") { drmModeRmFB(fd, framebufferID) }
        var destroy = drm_mode_destroy_dumb()
        destroy.handle = handle
        _ = try? DRMCall.check("DRM_IOCTL_MODE_DESTROY_DUMB") { vt_drm_destroy_dumb(fd, &destroy) }
    }
}
