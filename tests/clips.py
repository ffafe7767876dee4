"""Short test videos from ffmpeg's lavfi sources (H.264, yuv420p, so Chromium and ffprobe read them)."""

import subprocess
import tempfile
from pathlib import Path


def make_clip(path, pattern: str = "testsrc", size: str = "96x64", fps: int = 10, seconds: float = 1) -> Path:
    subprocess.run(
        ["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
         f"{pattern}=size={size}:rate={fps}:duration={seconds}", "-pix_fmt", "yuv420p", "-c:v", "libx264",
         "-g", str(fps), "-movflags", "+faststart", str(path)],
        check=True, timeout=60,
    )
    return Path(path)


def clip_bytes(**options) -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        return make_clip(Path(folder) / "clip.mp4", **options).read_bytes()
