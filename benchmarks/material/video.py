"""Video facts and frame sampling with ffmpeg (N frames uniformly over the video, at a size).
Model evaluation samples its video inputs here, so people and models see the same frames."""

import json
import subprocess
import tempfile
from pathlib import Path


class VideoError(ValueError):
    pass


def probe(path: str | Path) -> dict:
    """Duration (s), fps, frame count and size of the first video stream."""
    try:
        out = subprocess.run(
            ["ffprobe", "-v", "error", "-select_streams", "v:0", "-count_frames", "-show_entries",
             "stream=width,height,avg_frame_rate,nb_read_frames:format=duration", "-of", "json", str(path)],
            capture_output=True, text=True, timeout=60, check=True,
        ).stdout
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        raise VideoError(f"not a readable video: {path}") from exc
    data = json.loads(out)
    if not data.get("streams"):
        raise VideoError(f"no video stream in {path}")
    stream = data["streams"][0]
    num, _, den = stream.get("avg_frame_rate", "0/1").partition("/")
    fps = float(num) / float(den or 1) if float(den or 1) else 0.0
    return {"duration": float(data["format"].get("duration", 0)), "fps": fps,
            "frames": int(stream.get("nb_read_frames", 0)), "width": stream["width"], "height": stream["height"]}


def sample_frames(video: bytes | str | Path, n: int, size: tuple[int, int],
                  duration: float | None = None) -> list[bytes]:
    """N PNG frames at the centres of N equal slices of the video, scaled to size (w, h). Pass the
    duration when it is known: probing counts the frames, which decodes the whole video."""
    if n < 1:
        raise VideoError("ask for at least one frame")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(video) if not isinstance(video, bytes) else Path(tmp) / "video"
        if isinstance(video, bytes):
            path.write_bytes(video)
        if duration is None:
            duration = probe(path)["duration"]
        frames = []
        for i in range(n):
            at = duration * (i + 0.5) / n
            result = subprocess.run(
                ["ffmpeg", "-v", "error", "-ss", f"{at:.3f}", "-i", str(path), "-frames:v", "1",
                 "-vf", f"scale={size[0]}:{size[1]}", "-f", "image2pipe", "-vcodec", "png", "-"],
                capture_output=True, timeout=60,
            )
            if result.returncode or not result.stdout:
                raise VideoError(f"could not read a frame at {at:.2f} s")
            frames.append(result.stdout)
    return frames
