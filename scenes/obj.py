"""Wavefront OBJ meshes as arrays: 3RScan's `mesh.refined.v2.obj` with its texture (`.mtl` and the
image it names) or vertex colours, read with numpy on whole columns like the PLY reader (scans.py)."""

import io

import numpy as np

from .scans import ScanError


def _obj_numbers(lines: list[bytes], keyword: bytes) -> tuple[np.ndarray, int]:
    """The numbers after the keyword of OBJ lines of one kind as (rows, width); every line must
    hold as many as the first."""
    width = len(lines[0].split()) - 1
    skip = len(keyword) + 1
    try:
        values = np.array(b" ".join(line[skip:] for line in lines).split(), dtype=np.float64)
    except ValueError:
        raise ScanError(f"a '{keyword.decode()}' line holds something that is not a number") from None
    if width < 1 or values.size != width * len(lines):
        raise ScanError(f"each '{keyword.decode()}' line must hold {width} numbers, as the first one does")
    return values.reshape(len(lines), width), width


def _obj_faces(lines: list[bytes], n_vertices: int, n_uvs: int) -> tuple[np.ndarray, np.ndarray | None]:
    """(vertex indices (F, 3), texture-coordinate indices (F, 3) or None), 0-based; polygons are
    split into fans. Indices may be negative (relative to the end), as OBJ allows."""
    text = b" ".join(line[2:] for line in lines)
    if len(text.split()) != 3 * len(lines):  # not all triangles: fan-triangulate each polygon
        corners = [line.split()[1:] for line in lines]
        lines = [b"f " + b" ".join((c[0], c[i], c[i + 1])) for c in corners for i in range(1, len(c) - 1)]
        if not lines:
            raise ScanError("no face of the mesh has three corners")
        text = b" ".join(line[2:] for line in lines)
    parts = lines[0].split()[1].count(b"/") + 1
    text = text.replace(b"//", b"/0/").replace(b"/", b" ")
    try:
        values = np.array(text.split(), dtype=np.int64)
    except ValueError:
        raise ScanError("an 'f' line holds something that is not a vertex index") from None
    if values.size != 3 * parts * len(lines):
        raise ScanError("the 'f' lines do not all have the same form (v, v/vt, v//vn or v/vt/vn)")
    values = values.reshape(len(lines), 3, parts)

    def zero_based(index: np.ndarray, n: int, what: str) -> np.ndarray:
        index = np.where(index < 0, index + n, index - 1)
        if len(index) and (index.min() < 0 or index.max() >= n):
            raise ScanError(f"a face refers to a {what} the file does not have")
        return index

    faces = zero_based(values[:, :, 0], n_vertices, "vertex")
    uvs = None
    if parts >= 2 and n_uvs and (values[:, :, 1] != 0).all():
        uvs = zero_based(values[:, :, 1], n_uvs, "texture coordinate")
    return faces, uvs


def _mtl_textures(mtl: bytes) -> dict[str, str]:
    """{material name: map_Kd file name} of an .mtl file."""
    textures, current = {}, None
    for raw in mtl.decode("utf-8", errors="replace").splitlines():
        words = raw.strip().split(None, 1)
        if len(words) == 2 and words[0] == "newmtl":
            current = words[1].strip()
        elif len(words) == 2 and words[0] == "map_Kd" and current is not None:
            textures[current] = words[1].strip().split()[-1].replace("\\", "/").rsplit("/", 1)[-1]
    return textures


def _texture_pixels(content: bytes, name: str) -> np.ndarray:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(content)) as image:
            return np.asarray(image.convert("RGB"))
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as exc:
        raise ScanError(f"the texture {name} is not a readable image ({exc})", "texture") from None


def read_obj(data: bytes, mtl: bytes | None = None, images: dict[str, bytes] | None = None):
    """Vertices, colours and triangles of an OBJ mesh: float32 (N, 3) xyz, uint8 (N, 3) rgb and
    int64 (F, 3) faces. Colours come from the vertex lines (`v x y z r g b`, 0..1 or 0..255) or
    else from the texture: each vertex takes the texel at its UV (`vt`, as a face corner names it;
    v = 0 is the image's bottom row) in the map_Kd image of the material (`usemtl`) of its face;
    without an .mtl a single given image serves every material. `images` maps file names to bytes."""
    images = images or {}
    vertices, uv_lines, face_lines, materials = [], [], [], []
    for line in data.split(b"\n"):
        head = line[:3]
        if head[:2] == b"v ":
            vertices.append(line)
        elif head == b"vt ":
            uv_lines.append(line)
        elif head[:2] == b"f ":
            face_lines.append(line)
        elif line.startswith(b"usemtl"):
            materials.append((len(face_lines), line[6:].strip().decode("utf-8", errors="replace")))
    if not vertices:
        raise ScanError("the file has no vertices ('v' lines): not an OBJ mesh")
    table, width = _obj_numbers(vertices, b"v")
    if width not in (3, 4, 6, 7):
        raise ScanError(f"'v' lines hold {width} numbers; expected x y z [w] or x y z r g b")
    xyz = table[:, :3].astype(np.float32)
    if not np.isfinite(xyz).all():
        raise ScanError("some vertex coordinates are NaN or infinite")
    uvs = _obj_numbers(uv_lines, b"vt")[0][:, :2] if uv_lines else np.zeros((0, 2))
    faces, face_uvs = _obj_faces(face_lines, len(xyz), len(uvs)) if face_lines else (np.zeros((0, 3), np.int64), None)
    if width >= 6:
        colours = table[:, width - 3:]
        scale = 255.0 if colours.max(initial=0) <= 1.0 else 1.0
        return xyz, np.clip(np.rint(colours * scale), 0, 255).astype(np.uint8), faces
    if face_uvs is None or not images:
        raise ScanError("the mesh has no colours: neither 'v x y z r g b' lines nor a texture (vt + an image)")
    textures = _mtl_textures(mtl) if mtl else {}
    only = next(iter(images)) if len(images) == 1 else None
    rgb = np.full((len(xyz), 3), 128, dtype=np.uint8)
    bounds = [*[start for start, _ in materials], len(faces)]
    spans = [(0, bounds[0], None)] + [(start, bounds[k + 1], name) for k, (start, name) in enumerate(materials)]
    pixels: dict[str, np.ndarray] = {}
    coloured = 0
    for start, end, material in spans:
        if end <= start:
            continue
        name = textures.get(material) if material else None
        name = name if name in images else only
        if name is None:
            continue
        if name not in pixels:
            pixels[name] = _texture_pixels(images[name], name)
        image = pixels[name]
        height, width_px = image.shape[:2]
        corner_vertices, corner_uvs = faces[start:end].ravel(), face_uvs[start:end].ravel()
        u = np.clip(uvs[corner_uvs, 0], 0.0, 1.0)
        v = np.clip(uvs[corner_uvs, 1], 0.0, 1.0)
        cols = np.rint(u * (width_px - 1)).astype(np.int64)
        rows = np.rint((1.0 - v) * (height - 1)).astype(np.int64)
        rgb[corner_vertices] = image[rows, cols]
        coloured += len(corner_vertices)
    if not coloured:
        raise ScanError("no material of the mesh has a texture image among the files given", "texture")
    return xyz, rgb, faces


# --- ScanNet scene metadata (sceneXXXX_YY.txt) ----------------------------------------------------
