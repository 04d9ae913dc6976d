#!/usr/bin/env python3
"""checkpictures.py A.png B.png ...: the canvasapp pictures of every node are
the same pixels, and they are the root's drawing (not a blank or half-drawn
item): navy ground, a gold rectangle, a crimson ellipse."""
import struct
import sys
import zlib


def read_png(path):
    """(width, height, rows of (r, g, b)) of an 8-bit RGB or RGBA PNG."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
    width, height, depth, colour, _, _, interlace = header
    channels = {2: 3, 6: 4}.get(colour)
    if depth != 8 or channels is None or interlace:
        raise ValueError(f"{path}: PNG kind {depth}/{colour}/{interlace} not read here")
    raw, stride, rows, prev = zlib.decompress(idat), width * channels, [], bytearray(width * channels)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b, c = prev[i], prev[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append([tuple(line[x * channels:x * channels + 3]) for x in range(width)])
        prev = line
    return width, height, rows


def main(paths):
    pictures = [read_png(p) for p in paths]
    width, height, rows = pictures[0]
    if (width, height) != (160, 120):
        return f"{paths[0]} is {width}x{height}, not 160x120"
    for path, picture in zip(paths[1:], pictures[1:]):
        if picture != pictures[0]:
            return f"{path} differs from {paths[0]}"
    expected = {(50, 40): (255, 215, 0), (150, 110): (0, 0, 128), (115, 80): (220, 20, 60)}
    for (x, y), colour in expected.items():
        if rows[y][x] != colour:
            return f"pixel ({x}, {y}) is {rows[y][x]}, not {colour}"
    print(f"{len(paths)} pictures, {width}x{height}, the same pixels, the root's drawing")
    return None


if __name__ == "__main__":
    problem = main(sys.argv[1:])
    if problem:
        print("checkpictures: " + problem, file=sys.stderr)
        sys.exit(1)
