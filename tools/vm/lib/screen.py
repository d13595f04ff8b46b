"""Screendumps (QMP `screendump`: binary P6 PPM, 8 bits a channel): reading and writing them,
pixel probes at known points, and the classifier that tells the catalog, the slate, the player's
popups and banner, QEMU's "no scanout" page, a firmware logo and a text console apart.

Pure Python, stdlib only: a mask is a big int with one byte per pixel, so a 1280x800 screen is
classified in about 60 ms.
"""
import struct
import zlib


def read_ppm(path):
    """(width, height, RGB bytes) of a P6 PPM; raises ValueError when it is not an 8-bit P6 or is truncated."""
    with open(path, "rb") as f:
        data = f.read()
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            pos = data.index(b"\n", pos) + 1
            continue
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    if fields[0] != b"P6" or int(fields[3]) != 255:
        raise ValueError(f"{path}: not an 8-bit P6 PPM")
    w, h = int(fields[1]), int(fields[2])
    pix = data[pos + 1:pos + 1 + w * h * 3]
    if len(pix) != w * h * 3:
        raise ValueError(f"{path}: truncated ({len(pix)} of {w * h * 3} bytes)")
    return w, h, pix


def pixel(img, x, y):
    """The (r, g, b) at column x, row y."""
    w, _, pix = img
    i = (y * w + x) * 3
    return tuple(pix[i:i + 3])


def hexc(c):
    """'#RRGGBB'."""
    return "#%02X%02X%02X" % tuple(c)


def near(c, ref, tol):
    """Each channel of c within tol of ref."""
    return all(abs(a - b) <= tol for a, b in zip(c, ref))


RED, GREEN, BLUE, BLACK, SLATE = (255, 0, 0), (0, 255, 0), (0, 0, 255), (0, 0, 0), (0x1E, 0x2A, 0x38)


def content_points(w, h):
    """Points inside the picture for a 16:9 video shown with fit contain on any screen from
    4:3 to 21:9: the centre and four points around it."""
    return [(w // 2, h // 2), (w // 4, h // 2), (3 * w // 4, h // 2), (w // 2, h // 3), (w // 2, 2 * h // 3)]


def picture_colour(img, tol=40):
    """'red', 'green', 'blue', 'black', 'slate' when all content points agree, else None."""
    w, h, _ = img
    pts = [pixel(img, x, y) for x, y in content_points(w, h)]
    for name, ref in (("red", RED), ("green", GREEN), ("blue", BLUE), ("black", BLACK), ("slate", SLATE)):
        if all(near(p, ref, tol if name != "slate" else 12) for p in pts):
            return name
    return None


def letterbox(img, tol=16):
    """The bars that fit contain leaves around a 16:9 picture on this screen, probed in their middle:
    (where, bar size in px, their colours, all black within tol), or None when the screen is 16:9."""
    w, h, _ = img
    if abs(w * 9 - h * 16) <= 16:
        return None
    if w * 9 < h * 16:  # taller: bars top and bottom
        bar = (h - w * 9 // 16) // 2
        pts, where = [(w // 2, bar // 2), (w // 2, h - 1 - bar // 2)], "top/bottom"
    else:
        bar = (w - h * 16 // 9) // 2
        pts, where = [(bar // 2, h // 2), (w - 1 - bar // 2, h // 2)], "left/right"
    cols = [pixel(img, x, y) for x, y in pts]
    return where, bar, cols, bar < 2 or all(near(c, BLACK, tol) for c in cols)


def colour_stats(img, step=1):
    """(non-black fraction, {RGB bytes: count}, pixels counted) over every step-th row and column."""
    w, h, pix = img
    nonblack, colours, n = 0, {}, 0
    for y in range(0, h, step):
        row = pix[y * w * 3:(y + 1) * w * 3]
        for x in range(0, w, step):
            c = row[x * 3:x * 3 + 3]
            n += 1
            if c != b"\0\0\0":
                nonblack += 1
            colours[c] = colours.get(c, 0) + 1
    return nonblack / max(n, 1), colours, n


_tables = {}


def _mask(chan, lo, hi):
    """A big int with one byte per pixel: 1 where lo <= value <= hi, else 0."""
    t = _tables.get((lo, hi))
    if t is None:
        t = _tables[(lo, hi)] = bytes(1 if lo <= v <= hi else 0 for v in range(256))
    return int.from_bytes(chan.translate(t), "big")


def _count(m, n):
    return m.to_bytes(n, "big").count(1)


def classify(img, inactive_ref=None):
    """Classifies a screendump. Returns (class, details) where class is one of
    'inactive' (QEMU's own 'Display output is not active' page: no guest scanout),
    'splash' (a picture centred on black: the firmware's logo),
    'black', 'catalog', 'catalog-transition', 'slate', 'popup', 'banner', 'console', 'other'.

    catalog: >= 95 % of pixels near red, green, blue or black (letterbox);
    catalog-transition: the same with red/green/black mixes (a crossfade or fade);
    slate: >= 80 % of pixels near #1E2A38;
    popup: a player popup panel (#F4F6F8, at least 2 % of the screen; see popup_boxes);
    banner: the player's status banner (an accent colour, text in the lower half; see banner_box);
    console: a few grey/white pixels (glyphs, a cursor) on a mostly black screen;
    black: >= 99.5 % black and no grey/white pixel."""
    w, h, pix = img
    n = w * h
    if inactive_ref is not None and inactive_ref[:2] == (w, h) and inactive_ref[2] == pix:
        return "inactive", {"n": n}
    r, g, b = pix[0::3], pix[1::3], pix[2::3]
    black = _mask(r, 0, 40) & _mask(g, 0, 40) & _mask(b, 0, 40)
    red = _mask(r, 150, 255) & _mask(g, 0, 80) & _mask(b, 0, 80)
    green = _mask(r, 0, 80) & _mask(g, 150, 255) & _mask(b, 0, 80)
    blue = _mask(r, 0, 80) & _mask(g, 0, 80) & _mask(b, 150, 255)
    slate = _mask(r, 18, 42) & _mask(g, 30, 54) & _mask(b, 44, 68)
    blue_low = _mask(b, 0, 48)
    known = black | red | green
    mix = blue_low ^ (blue_low & known)
    grey = 0
    for lo, hi in ((64, 127), (128, 191), (192, 255)):  # r, g, b in the same quarter, >= 64
        grey |= _mask(r, lo, hi) & _mask(g, lo, hi) & _mask(b, lo, hi)
    c = {k: _count(m, n) for k, m in (("black", black), ("red", red), ("green", green), ("blue", blue),
                                       ("slate", slate), ("mix", mix), ("grey", grey))}
    f = {k: v / n for k, v in c.items()}
    d = {"n": n, "frac": {k: round(v, 4) for k, v in f.items()}, "grey_px": c["grey"]}
    if f["slate"] >= 0.80:
        return "slate", d
    popup = popup_boxes(img)
    if popup:
        d.update(popup)
        return "popup", d
    banner = banner_box(img)
    if banner:
        d.update(banner)
        return "banner", d
    if c["grey"] >= 8:
        # Where is the non-black content? Consoles write from the top-left corner; QEMU's
        # "Display output is not active." page is one centred line of text (at most 400x20
        # px); a firmware logo is a picture in the middle of a black screen.
        box = _bbox(black.to_bytes(n, "big"), w, h)
        d["bbox"] = box
        d["grey_box"] = _mask_bbox(grey, w, h)
        if box:
            x0, y0, x1, y1 = box
            bw, bh = x1 - x0 + 1, y1 - y0 + 1
            cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
            if bw <= 400 and bh <= 20 and abs(cx - w / 2) <= 8 and abs(cy - h / 2) <= 12:
                return "inactive", d
            if x0 >= w * 0.2 and x1 <= w * 0.8 and y0 >= h * 0.2 and y1 <= h * 0.8 \
                    and abs(cx - w / 2) <= w * 0.05:
                return "splash", d
        return "console", d
    if f["black"] >= 0.995:
        return "black", d
    if f["black"] + f["red"] + f["green"] + f["blue"] >= 0.95:
        return "catalog", d
    if f["black"] + f["red"] + f["green"] + f["blue"] + f["mix"] >= 0.95:
        return "catalog-transition", d
    return "other", d


# The player's popup colours (Sources/Vitrine/Screen/OverlayLayer.swift): the panel and its buttons.
PANEL_RGB = (0xF4, 0xF6, 0xF8)
BUTTON_RGB = (0x1F, 0x6F, 0xEB)


def _colour_mask(img, rgb, tol):
    _, _, pix = img
    r, g, b = pix[0::3], pix[1::3], pix[2::3]
    return (_mask(r, max(0, rgb[0] - tol), min(255, rgb[0] + tol)) & _mask(g, max(0, rgb[1] - tol), min(255, rgb[1] + tol))
            & _mask(b, max(0, rgb[2] - tol), min(255, rgb[2] + tol)))


def popup_boxes(img, min_fraction=0.02):
    """{'panel': (x0, y0, x1, y1), 'panel_px': n, 'button': box or None} when the picture shows a
    fully opaque popup panel (at least min_fraction of the pixels in the panel colour), else None.
    A panel on top is its own colour; one under another popup's dimming is darker and not counted."""
    w, h, _ = img
    n = w * h
    panel = _colour_mask(img, PANEL_RGB, 6)
    count = _count(panel, n)
    if count < n * min_fraction:
        return None
    box = _mask_bbox(panel, w, h)
    button = _colour_mask(img, BUTTON_RGB, 12)
    bbox = _mask_bbox(button, w, h) if _count(button, n) >= 50 else None
    return {"panel": box, "panel_px": count, "button": bbox}


# The status banner's accent colours (Sources/Vitrine/Screen/BannerLayer.swift).
BANNER_ACCENTS = {"progress": (0x38, 0x8B, 0xFD), "success": (0x2E, 0xA0, 0x43), "failure": (0xF8, 0x51, 0x49)}


def banner_box(img):
    """{'banner': style, 'banner_box': box of its text and indicator} when the player's status banner
    is up: pixels of an accent colour (at least 30) and every grey/white pixel in the lower half."""
    w, h, pix = img
    n = w * h
    best = None
    for style, rgb in BANNER_ACCENTS.items():
        c = _count(_colour_mask(img, rgb, 16), n)
        if c >= 30 and (best is None or c > best[1]):
            best = (style, c)
    if not best:
        return None
    r, g, b = pix[0::3], pix[1::3], pix[2::3]
    grey = 0
    for lo, hi in ((96, 159), (160, 255)):
        grey |= _mask(r, lo, hi) & _mask(g, lo, hi) & _mask(b, lo, hi)
    box = _mask_bbox(grey, w, h)
    if box and box[1] < h // 2:
        return None
    return {"banner": best[0], "banner_box": box}


def _mask_bbox(mask, w, h):
    """(x0, y0, x1, y1) of the pixels set in a _mask() result, or None."""
    return _bbox(mask.to_bytes(w * h, "big").translate(bytes([1, 0]) + bytes(254)), w, h)


def _bbox(blackbytes, w, h):
    """(x0, y0, x1, y1) of the pixels that are not black (mask byte 0), or None."""
    x0, y0, x1, y1 = w, None, -1, None
    for y in range(h):
        row = blackbytes[y * w:(y + 1) * w]
        i = row.find(0)
        if i < 0:
            continue
        if y0 is None:
            y0 = y
        y1 = y
        x0 = min(x0, i)
        x1 = max(x1, row.rfind(0))
    return None if y0 is None else (x0, y0, x1, y1)


def read_png(data):
    """(width, height, RGB bytes) of a PNG given as bytes: 8 bits a channel, grey, RGB, grey+alpha or
    RGBA (alpha dropped), not interlaced, any of the five row filters (PNG spec, section 9).
    Raises ValueError for anything else or a damaged file."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG (no signature)")
    pos, ihdr, idat = 8, None, []
    while pos + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if pos + 12 + n > len(data):
            raise ValueError(f"PNG chunk {kind!r} at byte {pos}: truncated")
        body = data[pos + 8:pos + 8 + n]
        if zlib.crc32(kind + body) & 0xffffffff != struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0]:
            raise ValueError(f"PNG chunk {kind!r} at byte {pos}: bad CRC")
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + n
    if ihdr is None or not idat:
        raise ValueError("PNG without IHDR or IDAT")
    w, h, depth, ctype, _, _, interlace = ihdr
    channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(ctype)
    if depth != 8 or channels is None or interlace != 0:
        raise ValueError(f"PNG of bit depth {depth}, colour type {ctype}, interlace {interlace}: not supported")
    raw = zlib.decompress(b"".join(idat))
    bpp, stride = channels, w * channels
    if len(raw) < h * (stride + 1):
        raise ValueError(f"PNG data too short: {len(raw)} of {h * (stride + 1)} bytes")
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif f == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        elif f != 0:
            raise ValueError(f"PNG row {y}: unknown filter {f}")
        rows.append(bytes(line))
        prev = line
    pix = b"".join(rows)
    if channels == 3:
        return w, h, pix
    if channels == 4:
        out = bytearray(w * h * 3)
        out[0::3], out[1::3], out[2::3] = pix[0::4], pix[1::4], pix[2::4]
        return w, h, bytes(out)
    grey = pix if channels == 1 else pix[0::2]
    out = bytearray(w * h * 3)
    out[0::3] = out[1::3] = out[2::3] = grey
    return w, h, bytes(out)


def difference(a, b, tol=16):
    """How two pictures of the same size differ: (mean absolute difference per channel, 0-255;
    the largest channel difference; the fraction of pixels with a channel off by more than tol).
    Raises ValueError when the sizes differ."""
    (wa, ha, pa), (wb, hb, pb) = a, b
    if (wa, ha) != (wb, hb):
        raise ValueError(f"sizes differ: {wa}x{ha} and {wb}x{hb}")
    if pa == pb:
        return 0.0, 0, 0.0
    total, worst, off = 0, 0, 0
    for i in range(0, len(pa), 3):
        d = max(abs(pa[i] - pb[i]), abs(pa[i + 1] - pb[i + 1]), abs(pa[i + 2] - pb[i + 2]))
        if d:
            total += abs(pa[i] - pb[i]) + abs(pa[i + 1] - pb[i + 1]) + abs(pa[i + 2] - pb[i + 2])
            worst = max(worst, d)
            off += d > tol
    return total / len(pa), worst, off / (wa * ha)


def write_png(img, path):
    """Writes an image (width, height, RGB bytes) as an 8-bit RGB PNG (zlib level 6)."""
    w, h, pix = img
    raw = b"".join(b"\0" + pix[y * w * 3:(y + 1) * w * 3] for y in range(h))

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))
