"""Video facts and frame sampling with PyAV (FFmpeg's libraries inside the `av` wheel): N frames
uniformly over the video, at a size, decoded in one pass. Model evaluation samples its video inputs
here (through frames.py, which keeps each frame set), so people and models see the same frames."""

import io
from pathlib import Path

import av


class VideoError(ValueError):
    pass


def _open(video: bytes | str | Path):
    try:
        return av.open(io.BytesIO(video) if isinstance(video, bytes) else str(video))
    except (av.FFmpegError, OSError, ValueError) as exc:
        raise VideoError(f"not a readable video: {video if not isinstance(video, bytes) else 'the bytes'}") from exc


def _first_video_stream(container, video) -> "av.VideoStream":
    if not container.streams.video:
        raise VideoError(f"no video stream in {video if not isinstance(video, bytes) else 'the bytes'}")
    return container.streams.video[0]


def probe(video: bytes | str | Path) -> dict:
    """Duration (s), fps, frame count and size of the first video stream. The frame count is the
    container's; a container that does not record it (Matroska, WebM) has its packets counted,
    which reads the file but decodes nothing."""
    with _open(video) as container:
        stream = _first_video_stream(container, video)
        frames = stream.frames or sum(1 for packet in container.demux(stream) if packet.size)
        return {"duration": probe_duration(container, stream), "fps": float(stream.average_rate or 0), "frames": frames, "width": stream.codec_context.width,
                "height": stream.codec_context.height}


def sample_frames(video: bytes | str | Path, n: int, size: tuple[int, int],
                  duration: float | None = None) -> list[bytes]:
    """N PNG frames at the centres of N equal slices of the video (the frame on screen at each centre),
    scaled to size (w, h), from one decoding pass that stops after the last one needed."""
    if n < 1:
        raise VideoError("ask for at least one frame")
    width, height = int(size[0]), int(size[1])
    with _open(video) as container:
        stream = _first_video_stream(container, video)
        stream.thread_type = "AUTO"  # frame and slice threads of the decoder
        if duration is None:
            duration = probe_duration(container, stream)
        start = float(stream.start_time * stream.time_base) if stream.start_time is not None else 0.0
        targets = [start + duration * (i + 0.5) / n for i in range(n)]
        frames, shown = [], None  # shown: the frame on screen until this one
        try:
            for frame in container.decode(stream):
                if frame.time is None:
                    continue
                while len(frames) < n and frame.time > targets[len(frames)] + 1e-6:
                    frames.append(_png(shown if shown is not None else frame, width, height))
                if len(frames) == n:
                    break
                shown = frame
        except av.FFmpegError as exc:
            raise VideoError(f"could not decode the video ({exc})") from exc
        if shown is None and not frames:
            raise VideoError("the video has no frame to read")
        while len(frames) < n:  # the last centres: the last frame is still on screen
            frames.append(_png(shown, width, height))
    return frames


def probe_duration(container, stream) -> float:
    """The stream's duration in seconds, else the container's."""
    if stream.duration is not None and stream.time_base:
        return float(stream.duration * stream.time_base)
    return (container.duration or 0) / av.time_base


def _png(frame, width: int, height: int) -> bytes:
    image = frame.reformat(width=width, height=height, format="rgb24", interpolation="BICUBIC").to_image()
    out = io.BytesIO()
    image.save(out, format="PNG", compress_level=1)  # lossless either way; level 1 encodes 5x faster
    return out.getvalue()
