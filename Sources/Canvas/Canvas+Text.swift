internal import CCairo

/// Horizontal alignment of the lines of a text block within its width.
public enum TextAlignment: Sendable, Hashable {
    case left
    case center
    case right
}

extension Canvas {
    /// Lays out UTF-8 `text` with Pango and draws it with its top-left corner at (`x`, `y`).
    ///
    /// Lines wrap at word boundaries (inside words when a word alone is too wide) to fit
    /// `width` pixels and are aligned within that width. With `maxHeight`, text that would be
    /// taller is cut after the last line that fits, ending in "…" (at least one line is always
    /// shown). `color` is `0xAARRGGBB`, blended over what is there.
    ///
    /// - Parameters:
    ///   - font: A Pango font description, such as `"DejaVu Sans 28"` or `"Sans Bold 16px"`;
    ///     sizes without `px` are points at 96 dpi.
    /// - Returns: The size the laid-out text occupies, in pixels (Pango's logical extents); the
    ///   width is at most `width`.
    ///
    /// The corresponding C functions are `pango_layout_set_text` and `pango_cairo_show_layout`.
    @discardableResult
    public func drawText(_ text: String, x: Double, y: Double, width: Double, maxHeight: Double? = nil,
                         font: String, color: UInt32, alignment: TextAlignment = .left) -> (width: Double, height: Double) {
        withLayout(text, width: width, maxHeight: maxHeight, font: font, alignment: alignment) { layout in
            cairo_save(cairo)
            setSource(color)
            cairo_move_to(cairo, x, y)
            pango_cairo_show_layout(cairo, layout)
            cairo_restore(cairo)
            return pixelSize(layout)
        }
    }

    /// The size `drawText` would occupy with the same arguments, in pixels, without drawing.
    ///
    /// The corresponding C function is `pango_layout_get_pixel_size`.
    public func measureText(_ text: String, width: Double, maxHeight: Double? = nil, font: String,
                            alignment: TextAlignment = .left) -> (width: Double, height: Double) {
        withLayout(text, width: width, maxHeight: maxHeight, font: font, alignment: alignment, pixelSize)
    }

    /// How many characters of `text` no installed font covers (Pango draws them as boxes with their
    /// hex code): 0 when the fonts fontconfig finds for `font`, with its fallbacks, cover every one.
    ///
    /// The corresponding C function is `pango_layout_get_unknown_glyphs_count`.
    public func unknownGlyphCount(_ text: String, font: String) -> Int {
        withLayout(text, width: 1e6, maxHeight: nil, font: font, alignment: .left) { layout in
            Int(pango_layout_get_unknown_glyphs_count(layout))
        }
    }

    /// Builds a Pango layout for this canvas's Cairo context, passes it to `body`, then releases it.
    private func withLayout<R>(_ text: String, width: Double, maxHeight: Double?, font: String,
                               alignment: TextAlignment, _ body: (OpaquePointer) -> R) -> R {
        let layout = pango_cairo_create_layout(cairo)!
        defer { g_object_unref(UnsafeMutableRawPointer(layout)) }

        let description = pango_font_description_from_string(font)
        defer { pango_font_description_free(description) }
        pango_layout_set_font_description(layout, description)

        pango_layout_set_width(layout, pangoUnits(width))
        pango_layout_set_wrap(layout, PANGO_WRAP_WORD_CHAR)
        if let maxHeight {
            pango_layout_set_height(layout, pangoUnits(maxHeight))
            pango_layout_set_ellipsize(layout, PANGO_ELLIPSIZE_END)
        }
        switch alignment {
        case .left: pango_layout_set_alignment(layout, PANGO_ALIGN_LEFT)
        case .center: pango_layout_set_alignment(layout, PANGO_ALIGN_CENTER)
        case .right: pango_layout_set_alignment(layout, PANGO_ALIGN_RIGHT)
        }
        pango_layout_set_text(layout, text, -1)
        return body(layout)
    }

    private func pixelSize(_ layout: OpaquePointer) -> (width: Double, height: Double) {
        var width: Int32 = 0
        var height: Int32 = 0
        pango_layout_get_pixel_size(layout, &width, &height)
        return (Double(width), Double(height))
    }

    private func pangoUnits(_ pixels: Double) -> Int32 {
        Int32(clamping: Int((max(0, pixels) * Double(PANGO_SCALE)).rounded(.down)))
    }
}
