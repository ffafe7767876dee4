"""Geometry of scans: the gravity-and-Manhattan alignment of a room and oriented object boxes.

Hypo3D works in an aligned frame: floor on the XY plane (z = 0), Z up, walls on the X and Y axes.
ScanNet ships that transform (`axisAlignment` in the scene's .txt); for any other scan it is
estimated here from the scan's own surfaces:

1. surface elements with a normal and a weight: the mesh's triangles (area-weighted) when the file
   has faces, else planar cells of a voxel grid (local PCA of the points in each cell);
2. up: a mean shift on the sphere over the near-vertical normals (floor, table tops, ceiling with
   its normal flipped), started at +Z: scans are taken roughly upright (ScanNet and 3RScan meshes
   both have +Z up), so the estimate corrects a tilt, never turns a scan over;
3. walls: the angles of the horizontal normals modulo 90 degrees (a histogram of 4 * angle on the
   circle, then the weighted circular mean around its peak); the turn about Z is the smallest that
   puts the dominant wall direction on an axis;
4. floor: the lowest horizontal plane (of the upward-facing elements' heights, the lowest bin with
   a good share of the largest) goes to z = 0 (levelled by a robust fit of that plane); the
   footprint is centred on the origin, as ScanNet's aligned scenes are. A scan already aligned
   (tilt and turn under 0.1 degrees) keeps its coordinates; only a floor off z = 0 is moved.

Object boxes are fitted in the aligned frame as the minimum-area rectangle of the object's footprint
(rotating calipers over the 2D convex hull) with its yaw, so a wall is a thin box and a turned sofa
is not inflated. Everything is numpy on whole arrays; the 2D hull is scipy's ConvexHull.
"""

import math

import numpy as np

IDENTITY = np.eye(4)
UP_CONE_DEG = 45.0  # normals within this of +Z (or -Z) may belong to horizontal surfaces
UP_STEPS_DEG = (25.0, 15.0, 8.0, 5.0)
WALL_MAX_TILT = math.sin(math.radians(15.0))  # |n_z| below this: a vertical surface
WALL_WINDOW_DEG = 10.0  # half-width (in 4 x angle) of the peak the wall direction is averaged over
MIN_UP_PEAK = 0.05  # share of all surface weight within 8 degrees of up
MIN_SHARE = 0.03  # horizontal (or vertical) surfaces must hold this share of the surface weight
MIN_WALL_PEAK = 0.15  # share of vertical weight at the wall peak (uniform directions give 0.056)
FLOOR_BIN_M = 0.02
FLOOR_SHARE_OF_PEAK = 0.3
ALREADY_ALIGNED_DEG = 0.1  # a smaller tilt and turn leave the scan's coordinates as they are
FLOOR_TOLERANCE_M = 0.02  # and a floor this close to z = 0 stays where it is
FLOOR_BAND_M = 0.05  # points this close to the floor's height are fitted as its plane
MAX_EDGE_M = 0.5  # longer triangle edges are not a surface patch (or not metres): ignored
VOXEL_SIZES_M = (0.1, 0.2, 0.4)
MIN_VOXEL_POINTS = 6
PLANARITY = 0.25  # a cell is flat when its smallest spread is under this share of the next one
MAX_SAMPLES = 500_000
SNAP_AREA_RATIO = 1.02  # a box whose axis-aligned rectangle is at most 2% larger is kept at yaw 0


# --- transforms ------------------------------------------------------------------------------------


def transform(matrix: np.ndarray, xyz: np.ndarray) -> np.ndarray:
    """Points (N, 3) through a 4x4 rigid transform, as float32 (computed in float64)."""
    matrix = np.asarray(matrix, dtype=np.float64)
    out = np.asarray(xyz, dtype=np.float64) @ matrix[:3, :3].T
    out += matrix[:3, 3]
    return out.astype(np.float32)


def rigid_error(matrix: np.ndarray) -> str | None:
    """Why a 4x4 matrix is not a rotation plus translation (None when it is one, to 1e-3)."""
    matrix = np.asarray(matrix, dtype=np.float64)
    if matrix.shape != (4, 4) or not np.isfinite(matrix).all():
        return "it must be 16 finite numbers"
    if not np.allclose(matrix[3], [0, 0, 0, 1], atol=1e-6):
        return "its last row must be 0 0 0 1"
    rotation = matrix[:3, :3]
    if not np.allclose(rotation @ rotation.T, np.eye(3), atol=1e-3) or np.linalg.det(rotation) <= 0:
        return "its upper 3x3 block is not a rotation"
    return None


def yaw_of(matrix: np.ndarray) -> float:
    """The turn about Z a transform gives a horizontal direction (radians)."""
    matrix = np.asarray(matrix, dtype=np.float64)
    return math.atan2(matrix[1, 0], matrix[0, 0])


def _rotation_onto_z(up: np.ndarray) -> np.ndarray:
    """The smallest rotation taking the unit vector `up` to +Z (Rodrigues)."""
    z = np.array([0.0, 0.0, 1.0])
    axis = np.cross(up, z)
    s, c = np.linalg.norm(axis), float(up @ z)
    if s < 1e-12:
        return np.eye(3) if c > 0 else np.diag([1.0, -1.0, -1.0])
    k = axis / s
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + s * kx + (1 - c) * kx @ kx


def _rotation_z(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


# --- surface elements ----------------------------------------------------------------------------


def _sample(n: int, limit: int) -> slice:
    """Every k-th element, at most `limit` of them (files list neighbours together, so a stride
    samples the whole scan)."""
    return slice(None, None, max(1, -(-n // limit)))


def _short_edges(xyz: np.ndarray, faces: np.ndarray) -> np.ndarray:
    v0, v1, v2 = (xyz[faces[:, k]] for k in range(3))
    longest = np.maximum.reduce([((a - b) ** 2).sum(axis=1) for a, b in ((v1, v0), (v2, v1), (v0, v2))])
    return longest <= MAX_EDGE_M**2


def _face_elements(xyz: np.ndarray, faces: np.ndarray):
    """(normals, weights, centres) of the triangles, area-weighted; long-edged ones left out. None
    when most triangles are long (not a surface mesh in metres)."""
    faces = faces[_sample(len(faces), MAX_SAMPLES)]
    probe = faces[_sample(len(faces), 20_000)]
    if _short_edges(xyz, probe).mean() < 0.2:
        return None
    v0, v1, v2 = (xyz[faces[:, k]].astype(np.float64) for k in range(3))
    cross = np.cross(v1 - v0, v2 - v0)
    area2 = np.linalg.norm(cross, axis=1)
    keep = (area2 > 1e-12) & _short_edges(xyz, faces)
    if keep.sum() < max(200, 0.2 * len(faces)):
        return None
    normals = cross[keep] / area2[keep, None]
    return _cell_average(normals, area2[keep] / 2, (v0[keep] + v1[keep] + v2[keep]) / 3)


def _cell_average(normals: np.ndarray, weights: np.ndarray, centres: np.ndarray):
    """Triangle normals averaged per voxel cell (area-weighted), keeping the cells whose triangles
    agree (resultant length over 0.9: one flat, consistently wound patch): a scanned mesh's single
    triangles are noisy, a 10 cm patch of them is not."""
    low = centres.min(axis=0)
    cells = np.floor((centres - low) / VOXEL_SIZES_M[0]).astype(np.int64)
    dims = cells.max(axis=0) + 1
    keys = (cells[:, 0] * dims[1] + cells[:, 1]) * dims[2] + cells[:, 2]
    _, inverse = np.unique(keys, return_inverse=True)
    n = inverse.max() + 1
    total = np.stack([np.bincount(inverse, normals[:, a] * weights, n) for a in range(3)], axis=1)
    area = np.bincount(inverse, weights, n)
    where = np.stack([np.bincount(inverse, centres[:, a] * weights, n) for a in range(3)], axis=1) / area[:, None]
    length = np.linalg.norm(total, axis=1)
    coherent = length > 0.9 * area
    if coherent.sum() < 20:
        return None
    return total[coherent] / length[coherent, None], area[coherent], where[coherent]


def _voxel_elements(xyz: np.ndarray):
    """(normals, weights, centres) of the planar cells of a voxel grid: per cell the covariance of
    its points (sums by bincount, one eigen-decomposition per cell), the normal its smallest
    eigenvector, the weight 1 (a cell's area). The cell grows until cells hold enough points."""
    points = np.asarray(xyz[_sample(len(xyz), MAX_SAMPLES)], dtype=np.float64)
    if len(points) < 50:
        return None
    low = points.min(axis=0)
    for size in VOXEL_SIZES_M:
        cells = np.floor((points - low) / size).astype(np.int64)
        dims = cells.max(axis=0) + 1
        keys = (cells[:, 0] * dims[1] + cells[:, 1]) * dims[2] + cells[:, 2]
        _, first, inverse, counts = np.unique(keys, return_index=True, return_inverse=True, return_counts=True)
        if np.median(counts) >= 2 * MIN_VOXEL_POINTS or size == VOXEL_SIZES_M[-1]:
            break
    local = points - (cells + 0.5) * size - low  # small numbers: no cancellation in the moments
    n = len(counts)
    mean = np.stack([np.bincount(inverse, local[:, a], n) for a in range(3)], axis=1) / counts[:, None]
    moments = np.empty((n, 3, 3))
    for a in range(3):
        for b in range(a, 3):
            moments[:, a, b] = moments[:, b, a] = np.bincount(inverse, local[:, a] * local[:, b], n) / counts
    full = counts >= MIN_VOXEL_POINTS
    cov = moments[full] - mean[full, :, None] * mean[full, None, :]
    values, vectors = np.linalg.eigh(cov)
    planar = (values[:, 1] > 1e-8) & (values[:, 0] < PLANARITY * values[:, 1])
    if planar.sum() < 20:
        return None
    cell_of = np.flatnonzero(full)[planar]
    centres = mean[cell_of] + low + (cells[first[cell_of]] + 0.5) * size
    # Each flat cell weighs the same, about its area: dense parts of a scan do not outvote the rest.
    return vectors[planar, :, 0], np.ones(len(cell_of)), centres


def surface_elements(xyz: np.ndarray, faces: np.ndarray | None = None):
    """(normals, weights, centres, kind): triangles when usable, else voxel cells; None if neither."""
    if faces is not None and len(faces):
        found = _face_elements(xyz, faces)
        if found is not None:
            return (*found, "faces")
    found = _voxel_elements(xyz)
    return None if found is None else (*found, "points")


# --- the estimate ---------------------------------------------------------------------------------


def _up_direction(normals: np.ndarray, weights: np.ndarray) -> np.ndarray | None:
    cone = np.abs(normals[:, 2]) >= math.cos(math.radians(UP_CONE_DEG))
    if weights[cone].sum() < MIN_SHARE * weights.sum():
        return None
    candidates = normals[cone] * np.sign(normals[cone, 2])[:, None]
    w = weights[cone]
    up = np.array([0.0, 0.0, 1.0])
    for step in UP_STEPS_DEG:
        for _ in range(20):  # a flat-kernel mean shift: to its fixed point, the mode
            near = candidates @ up >= math.cos(math.radians(step))
            if not near.any():
                return up
            total = (candidates[near] * w[near, None]).sum(axis=0)
            moved, up = up, total / np.linalg.norm(total)
            if moved @ up > math.cos(1e-5):
                break
    # A floor is a peak of the normals: random directions put under 1% of the weight within 8 degrees.
    peak = w[candidates @ up >= math.cos(math.radians(8.0))].sum()
    return up if peak >= MIN_UP_PEAK * weights.sum() else None


def _wall_angle(normals: np.ndarray, weights: np.ndarray) -> tuple[float, float] | None:
    """(angle of the dominant wall normal modulo 90 degrees in [-45, 45) degrees, as radians; the
    share of vertical weight at that peak), or None without a clear peak."""
    vertical = np.abs(normals[:, 2]) < WALL_MAX_TILT
    w = weights[vertical]
    if w.sum() < MIN_SHARE * weights.sum() or len(w) < 20:
        return None
    # Walls repeat every quarter turn: 4 x the normal's angle is the same for all of a room's walls.
    quad = np.mod(4 * np.arctan2(normals[vertical, 1], normals[vertical, 0]), 2 * math.pi)
    bins = 720
    hist = np.bincount((quad / (2 * math.pi) * bins).astype(np.int64) % bins, w, bins)
    kernel = np.exp(-0.5 * (np.arange(-12, 13) / 3.0) ** 2)
    smooth = np.convolve(np.r_[hist[-12:], hist, hist[:12]], kernel, mode="valid")
    peak = (np.argmax(smooth) + 0.5) / bins * 2 * math.pi
    for window in (WALL_WINDOW_DEG * 3, WALL_WINDOW_DEG * 2, WALL_WINDOW_DEG):
        for _ in range(20):  # circular mean shift to its fixed point
            offset = np.angle(np.exp(1j * (quad - peak)))
            near = np.abs(offset) <= math.radians(window)
            step = math.atan2((w[near] * np.sin(offset[near])).sum(), (w[near] * np.cos(offset[near])).sum())
            peak += step
            if abs(step) < 1e-5:
                break
    share = float(w[near].sum() / w.sum())
    if share < MIN_WALL_PEAK:
        return None
    angle = math.remainder(peak, 2 * math.pi) / 4  # in [-45, 45] degrees
    return angle, share


def _floor_height(normals: np.ndarray, weights: np.ndarray, heights: np.ndarray) -> float | None:
    upward = normals[:, 2] >= math.cos(math.radians(10.0))
    if not upward.any():
        return None
    z, w = heights[upward], weights[upward]
    low, high = np.quantile(z, [0.002, 0.998])
    bins = max(1, int(math.ceil((high - low) / FLOOR_BIN_M)))
    hist, edges = np.histogram(z, bins=bins, range=(low, high + 1e-9), weights=w)
    lowest = int(np.flatnonzero(hist >= FLOOR_SHARE_OF_PEAK * hist.max())[0])
    centre = (edges[lowest] + edges[lowest + 1]) / 2
    near = np.abs(z - centre) <= 2 * FLOOR_BIN_M
    order = np.argsort(z[near])
    cumulative = np.cumsum(w[near][order])
    return float(z[near][order][np.searchsorted(cumulative, cumulative[-1] / 2)])


def _floor_plane(points: np.ndarray, floor: float) -> np.ndarray | None:
    """The unit normal (+Z side) of the plane fitted to the points near height `floor` (points
    already roughly levelled): PCA, then refits on the points within 2.5 robust deviations of the
    plane, so wall bottoms and furniture feet drop out. None when too few points or too small a
    patch to tell a plane by."""
    near = points[np.abs(points[:, 2] - floor) <= FLOOR_BAND_M]
    if len(near) < 500:
        return None
    normal = np.array([0.0, 0.0, 1.0])
    for _ in range(5):
        centre = near.mean(axis=0)
        values, vectors = np.linalg.eigh(np.cov((near - centre).T))
        if values[1] < 0.3**2:  # the patch spans less than about a metre: not a floor to level by
            return None
        normal = vectors[:, 0] * np.sign(vectors[2, 0])
        residual = (near - centre) @ normal
        spread = 1.4826 * np.median(np.abs(residual))
        keep = np.abs(residual) <= max(2.5 * spread, 0.003)
        if keep.all() or keep.sum() < 500:
            break
        near = near[keep]
    return normal


def estimate_alignment(xyz: np.ndarray, faces: np.ndarray | None = None) -> tuple[np.ndarray, dict]:
    """(4x4 matrix taking the scan to the aligned frame, details). details["source"] is
    "estimated" when at least the floor was found (then also "tilt_deg", "turn_deg", "walls" found
    or not, "normals" from "faces" or "points", "floor": "plane" when the floor's own plane levelled
    the scan), else "none" with the identity and a "reason"."""
    xyz = np.asarray(xyz, dtype=np.float32)
    elements = surface_elements(xyz, faces)
    if elements is None:
        return IDENTITY.copy(), {"source": "none", "reason": "too few flat surfaces to find the floor"}
    normals, weights, centres, kind = elements
    up = _up_direction(normals, weights)
    if up is None:
        return IDENTITY.copy(), {"source": "none", "reason": "no horizontal surface (floor) found"}
    sample = np.asarray(xyz[_sample(len(xyz), MAX_SAMPLES // 2)], dtype=np.float64)
    # Level by all horizontal surfaces, find the floor, then level by the floor's own plane.
    tilt = _rotation_onto_z(up)
    floor = _floor_height(normals @ tilt.T, weights, (centres @ tilt.T)[:, 2])
    plane = _floor_plane(sample @ tilt.T, floor) if floor is not None else None
    if plane is not None:
        up = tilt.T @ plane
        tilt = _rotation_onto_z(up)
    normals, centres = normals @ tilt.T, centres @ tilt.T
    wall = _wall_angle(normals, weights)
    turn = -wall[0] if wall else 0.0
    rotation = _rotation_z(turn) @ tilt
    sample = sample @ rotation.T
    if plane is not None:
        floor = float(np.median(sample[np.abs(sample[:, 2] - floor) <= FLOOR_BAND_M, 2]))
    if floor is None:
        floor = float(np.quantile(sample[:, 2], 0.01))
    tilt_deg = math.degrees(math.acos(min(1.0, float(up[2]))))
    details = {
        "source": "estimated",
        "normals": kind,
        "floor": "plane" if plane is not None else "surfaces",
        "tilt_deg": round(tilt_deg, 3),
        "turn_deg": round(math.degrees(turn), 3),
        "walls": wall is not None,
        "wall_share": round(wall[1], 3) if wall else None,
    }
    matrix = np.eye(4)
    if tilt_deg < ALREADY_ALIGNED_DEG and abs(math.degrees(turn)) < ALREADY_ALIGNED_DEG:
        # Aligned already (a published aligned scan, a generated room): its coordinates are kept,
        # only a floor off z = 0 is moved there.
        details["already_aligned"] = True
        matrix[2, 3] = -floor if abs(floor) > FLOOR_TOLERANCE_M else 0.0
        return matrix, details
    centre_xy = (sample[:, :2].min(axis=0) + sample[:, :2].max(axis=0)) / 2
    matrix[:3, :3] = rotation
    matrix[:3, 3] = [-centre_xy[0], -centre_xy[1], -floor]
    return matrix, details


# --- oriented boxes --------------------------------------------------------------------------------


def _monotone_hull(points: np.ndarray) -> np.ndarray:
    """Convex hull vertices (counter-clockwise) of 2D points, Andrew's monotone chain."""
    pts = np.unique(points, axis=0)
    if len(pts) <= 2:
        return pts

    def turns_left(o, a, b) -> bool:
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]) > 0

    def half(seq):
        chain = []
        for p in seq:
            while len(chain) >= 2 and not turns_left(chain[-2], chain[-1], p):
                chain.pop()
            chain.append(p)
        return chain

    listed = pts.tolist()
    lower, upper = half(listed), half(listed[::-1])
    return np.array(lower[:-1] + upper[:-1])


def convex_hull_2d(points: np.ndarray) -> np.ndarray:
    # scipy's hull is the faster; imported here, since loading scipy.spatial adds 0.2 s to every process
    # that imports this app (servers, workers, manage.py) and only scan imports need it.
    from scipy.spatial import ConvexHull, QhullError

    points = np.asarray(points, dtype=np.float64)
    if len(points) >= 3:
        try:
            return points[ConvexHull(points).vertices]
        except (QhullError, ValueError):  # all on a line or one point
            pass
    if len(points) > 5000:  # the pure-Python chain: thin the interior out first
        points = np.unique(np.round(points, 3), axis=0)
    return _monotone_hull(points)


def min_area_rectangle(points: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(centre (2,), size (2,), yaw) of the smallest rectangle holding the 2D points; the size is
    along the rectangle's own axes, yaw in [-pi/4, pi/4) (a rectangle repeats every quarter turn, the
    sizes swap). A rectangle within 2% of the axis-aligned one's area is the axis-aligned one."""
    hull = convex_hull_2d(points)
    if len(hull) < 3:
        lo, hi = hull.min(axis=0), hull.max(axis=0)
        return (lo + hi) / 2, hi - lo, 0.0
    edges = np.roll(hull, -1, axis=0) - hull
    angles = np.unique(np.mod(np.arctan2(edges[:, 1], edges[:, 0]), math.pi / 2))
    angles = np.r_[0.0, angles]
    c, s = np.cos(angles), np.sin(angles)
    # Hull points in each candidate frame (rotated by -angle): (angles, points).
    u = c[:, None] * hull[None, :, 0] + s[:, None] * hull[None, :, 1]
    v = -s[:, None] * hull[None, :, 0] + c[:, None] * hull[None, :, 1]
    areas = (u.max(axis=1) - u.min(axis=1)) * (v.max(axis=1) - v.min(axis=1))
    best = int(np.argmin(areas))
    if areas[0] <= SNAP_AREA_RATIO * areas[best]:
        best = 0
    angle = float(angles[best])
    lo = np.array([u[best].min(), v[best].min()])
    hi = np.array([u[best].max(), v[best].max()])
    size = hi - lo
    mid = (lo + hi) / 2
    centre = np.array([math.cos(angle) * mid[0] - math.sin(angle) * mid[1],
                       math.sin(angle) * mid[0] + math.cos(angle) * mid[1]])
    if angle >= math.pi / 4:  # the same rectangle a quarter turn back, sizes swapped
        angle -= math.pi / 2
        size = size[::-1]
    return centre, size, angle


def oriented_box(xyz: np.ndarray) -> tuple[list[float], list[float], float]:
    """(centre, size, yaw) of an object's points: minimum-area footprint rectangle, z from min to max."""
    centre, size, yaw = min_area_rectangle(xyz[:, :2])
    z_lo, z_hi = float(xyz[:, 2].min()), float(xyz[:, 2].max())
    return [float(centre[0]), float(centre[1]), (z_lo + z_hi) / 2], [float(size[0]), float(size[1]), z_hi - z_lo], yaw


def oriented_boxes(xyz: np.ndarray, instance: np.ndarray) -> dict[int, tuple[list[float], list[float], float]]:
    """(centre, size, yaw) per non-zero instance id, from one sort of the ids."""
    order = np.argsort(instance, kind="stable")
    ids = instance[order]
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    ends = np.r_[starts[1:], len(ids)]
    sorted_xyz = xyz[order]
    return {int(ids[s]): oriented_box(sorted_xyz[s:e]) for s, e in zip(starts, ends, strict=True) if ids[s] != 0}


def box_through(matrix: np.ndarray, centre, size, yaw: float) -> tuple[list[float], list[float], float]:
    """A box {centre, size, yaw} of the raw frame in the aligned one (the centre moved, the yaw
    turned by the transform's turn about Z; sizes kept)."""
    moved = transform(matrix, np.asarray([centre], dtype=np.float64))[0]
    turned = math.remainder(yaw + yaw_of(matrix), 2 * math.pi)
    return [float(v) for v in moved], [float(v) for v in size], turned


def box_from_axes(matrix: np.ndarray, centroid, lengths, axes) -> tuple[list[float], list[float], float]:
    """An oriented box given by its centre, full lengths and unit axes (rows) in the raw frame, as
    (centre, size, yaw) in the aligned frame: the axis nearest the vertical gives the height, the
    first of the other two the yaw; yaw kept in [-pi/4, pi/4) like fitted boxes."""
    matrix = np.asarray(matrix, dtype=np.float64)
    axes = np.asarray(axes, dtype=np.float64) @ matrix[:3, :3].T
    lengths = np.asarray(lengths, dtype=np.float64)
    up = int(np.argmax(np.abs(axes[:, 2])))
    flat = [k for k in range(3) if k != up]
    first = axes[flat[0]]
    yaw = math.atan2(first[1], first[0])
    size = [lengths[flat[0]], lengths[flat[1]], lengths[up]]
    yaw = math.remainder(yaw, math.pi / 2)  # in [-pi/4, pi/4]; each quarter turn swaps x and y
    turns = round((math.atan2(first[1], first[0]) - yaw) / (math.pi / 2)) % 2
    if turns:
        size[0], size[1] = size[1], size[0]
    centre = transform(matrix, np.asarray([centroid], dtype=np.float64))[0]
    return [float(v) for v in centre], [float(v) for v in size], yaw
