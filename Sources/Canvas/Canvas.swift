internal import CCairo

/// A software drawing surface: a Cairo image surface in ARGB8888, premultiplied alpha.
///
/// Used for the slate shown when nothing can play, and for overlays that are drawn in RAM and
/// then copied once into a scanout buffer. Colours are `0xAARRGGBB`, not premultiplied; Cairo
/// premultiplies when it draws. Not thread-safe: use a canvas from one thread at a time.
public final class Canvas {
    /// The `cairo_surface_t`, owned.
    let surface: OpaquePointer
    /// The `cairo_t` drawing into `surface`, owned.
    let cairo: OpaquePointer

    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// Bytes per row, at least `4 * width` (Cairo aligns rows).
    public let stride: Int

    /// Creates a canvas of `width` × `height` pixels, every pixel transparent black (0x00000000).
    ///
    /// - Throws: `CanvasError` with operation `cairo_image_surface_create` and status
    ///   `CAIRO_STATUS_INVALID_SIZE` when a side is not in 1...32767, or `CAIRO_STATUS_NO_MEMORY`;
    ///   `cairo_create` when no drawing context can be made.
    ///
    /// The corresponding C function is `cairo_image_surface_create`.
    public init(width: Int, height: Int) throws(CanvasError) {
        guard (1...32_767).contains(width), (1...32_767).contains(height) else {
            throw CanvasError(operation: "cairo_image_surface_create", CAIRO_STATUS_INVALID_SIZE)
        }
        guard let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(width), Int32(height)) else {
            throw CanvasError(operation: "cairo_image_surface_create", CAIRO_STATUS_NO_MEMORY)
        }
        do throws(CanvasError) {
            try check("cairo_image_surface_create", cairo_surface_status(surface))
        } catch {
            cairo_surface_destroy(surface)
            throw error
        }
        guard let cairo = cairo_create(surface) else {
            cairo_surface_destroy(surface)
            throw CanvasError(operation: "cairo_create", CAIRO_STATUS_NO_MEMORY)
        }
        do throws(CanvasError) {
            try check("cairo_create", cairo_status(cairo))
        } catch {
            cairo_destroy(cairo)
            cairo_surface_destroy(surface)
            throw error
        }
        self.surface = surface
        self.cairo = cairo
        self.width = width
        self.height = height
        self.stride = Int(cairo_image_surface_get_stride(surface))
    }

    deinit {
        cairo_destroy(cairo)
        cairo_surface_destroy(surface)
    }

    /// Sets every pixel to `argb` (`0xAARRGGBB`), replacing what was there, transparency included.
    ///
    /// The corresponding C function is `cairo_paint` with `CAIRO_OPERATOR_SOURCE`.
    public func clear(_ argb: UInt32) {
        cairo_save(cairo)
        cairo_set_operator(cairo, CAIRO_OPERATOR_SOURCE)
        setSource(argb)
        cairo_paint(cairo)
        cairo_restore(cairo)
    }

    /// Fills a rectangle with rounded corners, blending `color` (`0xAARRGGBB`) over what is there.
    ///
    /// Coordinates and sizes are in pixels; pixel (0, 0) covers x 0..<1, y 0..<1. `radius` is
    /// clamped to half the shorter side; 0 gives square corners. Nothing is drawn for an empty size.
    ///
    /// The corresponding C functions are `cairo_arc` and `cairo_fill`.
    public func fillRoundedRect(x: Double, y: Double, width: Double, height: Double, radius: Double, color: UInt32) {
        guard width > 0, height > 0 else { return }
        roundedRectPath(x: x, y: y, width: width, height: height, radius: radius)
        setSource(color)
        cairo_fill(cairo)
    }

    /// Replaces the current path with a rectangle whose corners are quarter circles of `radius`
    /// (clamped to half the shorter side; 0 gives square corners).
    func roundedRectPath(x: Double, y: Double, width: Double, height: Double, radius: Double) {
        let r = max(0, min(radius, width / 2, height / 2))
        cairo_new_path(cairo)
        if r == 0 {
            cairo_rectangle(cairo, x, y, width, height)
        } else {
            cairo_new_sub_path(cairo)
            cairo_arc(cairo, x + width - r, y + r, r, -.pi / 2, 0)
            cairo_arc(cairo, x + width - r, y + height - r, r, 0, .pi / 2)
            cairo_arc(cairo, x + r, y + height - r, r, .pi / 2, .pi)
            cairo_arc(cairo, x + r, y + r, r, .pi, 3 * .pi / 2)
            cairo_close_path(cairo)
        }
    }

    /// Paints an opaque picture at (`x`, `y`): `pixels` is XRGB8888 (little-endian bytes B, G, R, x;
    /// the x byte is ignored), `width` × `height` pixels, `stride` bytes per row. It is copied as is
    /// (no scaling); the part outside the canvas is clipped. Nothing is drawn for an empty size.
    ///
    /// The corresponding C functions are `cairo_image_surface_create_for_data` (`CAIRO_FORMAT_RGB24`),
    /// `cairo_set_source_surface` and `cairo_fill`.
    public func drawImage(pixels: UnsafeRawPointer, width: Int, height: Int, stride: Int, x: Double, y: Double) {
        guard width > 0, height > 0, stride >= width * 4 else { return }
        guard let image = cairo_image_surface_create_for_data(UnsafeMutablePointer(mutating: pixels.assumingMemoryBound(to: UInt8.self)),
                                                              CAIRO_FORMAT_RGB24, Int32(width), Int32(height), Int32(stride)) else { return }
        defer { cairo_surface_destroy(image) }
        guard cairo_surface_status(image) == CAIRO_STATUS_SUCCESS else { return }
        cairo_save(cairo)
        cairo_set_source_surface(cairo, image, x, y)
        cairo_new_path(cairo)
        cairo_rectangle(cairo, x, y, Double(width), Double(height))
        cairo_fill(cairo)
        cairo_restore(cairo)
        cairo_surface_flush(surface)
    }

    /// A new canvas of the same size holding the same pixels (alpha included), to draw on without
    /// touching this one.
    ///
    /// - Throws: `CanvasError` when Cairo cannot make the new surface (out of memory).
    /// The corresponding C functions are `cairo_set_source_surface` and `cairo_paint` with
    /// `CAIRO_OPERATOR_SOURCE`.
    public func copy() throws(CanvasError) -> Canvas {
        let c = try Canvas(width: width, height: height)
        cairo_surface_flush(surface)
        cairo_save(c.cairo)
        cairo_set_operator(c.cairo, CAIRO_OPERATOR_SOURCE)
        cairo_set_source_surface(c.cairo, surface, 0, 0)
        cairo_paint(c.cairo)
        cairo_restore(c.cairo)
        cairo_surface_flush(c.surface)
        return c
    }

    /// Calls `body` with the pixels: little-endian ARGB8888 (bytes B, G, R, A), premultiplied,
    /// `stride` bytes per row, `height` rows. Pending drawing is flushed first.
    ///
    /// The buffer is valid only inside `body`; do not write to it.
    ///
    /// The corresponding C functions are `cairo_surface_flush` and `cairo_image_surface_get_data`.
    public func withPixels<R>(_ body: (UnsafeRawBufferPointer, _ stride: Int) throws -> R) rethrows -> R {
        cairo_surface_flush(surface)
        let data = cairo_image_surface_get_data(surface)
        return try body(UnsafeRawBufferPointer(start: data, count: stride * height), stride)
    }

    /// The pixel at (`x`, `y`) as `0xAARRGGBB`, premultiplied (an opaque colour reads back unchanged).
    ///
    /// `x` must be in `0..<width` and `y` in `0..<height` (a precondition).
    public func pixel(x: Int, y: Int) -> UInt32 {
        precondition((0..<width).contains(x) && (0..<height).contains(y), "Canvas.pixel: (\(x), \(y)) is outside \(width)x\(height)")
        return withPixels { pixels, stride in
            UInt32(littleEndian: pixels.loadUnaligned(fromByteOffset: y * stride + x * 4, as: UInt32.self))
        }
    }

    /// Writes the canvas to a PNG file, for snapshots and debugging.
    ///
    /// - Throws: `CanvasError` with operation `cairo_surface_write_to_png`, status
    ///   `CAIRO_STATUS_WRITE_ERROR` when the file cannot be written.
    ///
    /// The corresponding C function is `cairo_surface_write_to_png`.
    public func writePNG(to path: String) throws(CanvasError) {
        try check("cairo_surface_write_to_png", cairo_surface_write_to_png(surface, path))
    }

    /// Sets the Cairo source to `argb` (`0xAARRGGBB`, straight alpha).
    func setSource(_ argb: UInt32) {
        func channel(_ shift: UInt32) -> Double { Double((argb >> shift) & 0xFF) / 255 }
        cairo_set_source_rgba(cairo, channel(16), channel(8), channel(0), channel(24))
    }
}
