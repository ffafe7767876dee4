"""A release as a Hugging Face dataset: one Parquet file per split under data/, images and videos stored
as the `datasets` library stores them (struct {bytes, path}) and typed in the files' own schema metadata,
and a README.md dataset card whose YAML header declares license, task categories, configs, splits and
features; `push_release` uploads the folder with `huggingface_hub` (`HF_ENDPOINT`, token from the
environment)."""

import io
import json
import tempfile
from pathlib import Path

from core.errors import DomainError

from ..models import AssetRole, Release
from .geometry import CARD_KEY, GEOMETRY_KEY
from .lines import release_lines, split_name
from .published import item_image, read_bytes, release_items, scene_media
from .stream import format_bytes

# The release line's columns as the `datasets` library types them (tags and provenance are JSON text).
TEXT_COLUMNS = ("id", "external_id", "scene_id", "context_change", "context_change_raw", "change_type", "question",
                "answer_format", "tags", "provenance")
LIST_COLUMNS = ("world_frame", "choices", "answers")
# The media each family's items are shown: an image (Hypo3D: the scene's semantic top view), or M3-Verse's
# two videos (before, after).
IMAGE_ROLES = {"hypo3d": (AssetRole.TOPVIEW_SEMANTIC, AssetRole.TOPVIEW_PLAIN), "3dsrbench": (AssetRole.IMAGE,),
               "causalspatial": (AssetRole.IMAGE,), "spatial457": (AssetRole.IMAGE,)}
VIDEO_COLUMNS = ("video_before", "video_after")
# A release whose changes carry geometry: the line's `change_geometry` and the after-state's map.
GEOMETRY_FEATURES = {GEOMETRY_KEY: {"dtype": "string", "_type": "Value"}, "image_after_state": {"_type": "Image"}}
# The families whose image is a scene's own picture, shown with its marks (published.item_image).
MARKED = ("3dsrbench", "causalspatial", "spatial457")


def media_columns(family: str) -> dict[str, str]:
    """Column name -> `datasets` feature type of the family's media."""
    if family == "m3verse":
        return dict.fromkeys(VIDEO_COLUMNS, "Video")
    return {"image": "Image"}


def item_media(release: Release, items) -> dict[str, list]:
    """Per media column, one {bytes, path} (or None) per item, in release order."""
    family = release.benchmark.family
    cache: dict[int, bytes] = {}

    def cell(asset):
        if asset is None:
            return None
        if asset.pk not in cache:
            cache[asset.pk] = read_bytes(asset)
        return {"bytes": cache[asset.pk], "path": f"{asset.scene.external_id}/{Path(asset.file.name).name}"}

    if family == "m3verse":
        media = scene_media(items, (AssetRole.VIDEO,))
        columns = {name: [] for name in VIDEO_COLUMNS}
        for item in items:
            videos = sorted(media.get((item.scene_id, AssetRole.VIDEO), []), key=lambda a: a.meta.get("which") != "before")
            for k, name in enumerate(VIDEO_COLUMNS):
                columns[name].append(cell(videos[k]) if len(videos) > k else None)
        return columns
    if family in MARKED:  # the image as shown: its overlays and the item's marks drawn in
        media, drawn, images = scene_media(items, (AssetRole.IMAGE, AssetRole.IMAGE_FLIPPED)), {}, []
        for item in items:
            data = item_image(item, media, drawn)
            assets = media.get((item.scene_id, AssetRole.IMAGE)) or media.get((item.scene_id, AssetRole.IMAGE_FLIPPED))
            images.append(None if data is None else
                          {"bytes": data, "path": f"{item.scene.external_id}/{Path(assets[-1].file.name).name}"})
        return {"image": images}
    roles = IMAGE_ROLES[family]
    media = scene_media(items, (*roles, AssetRole.IMAGE_FLIPPED))
    images = []
    for item in items:
        flipped = (item.tags or {}).get("image_variant") == "flipped"
        wanted = (AssetRole.IMAGE_FLIPPED,) if flipped else roles
        found = next((media[(item.scene_id, role)][-1] for role in wanted if (item.scene_id, role) in media), None)
        images.append(cell(found))
    return {"image": images}


def after_state_images(items) -> list:
    """Per item, its change's after-state semantic top view (geometry.py) as {bytes, path},
    None for an item whose change has no edit or no after-state yet."""
    from ..selectors import after_state_assets

    cells, found = [], {}
    for item in items:
        change = item.change
        if change is not None and change.pk not in found:
            asset = after_state_assets(change).get(AssetRole.TOPVIEW_SEMANTIC)
            found[change.pk] = asset and {"bytes": read_bytes(asset),
                                          "path": f"{item.scene.external_id}/{Path(asset.file.name).name}"}
        cells.append(found.get(change.pk) if change is not None else None)
    return cells


def features_json(family: str, typed_video: bool = True, geometry: bool = False) -> dict:
    """The features as `datasets` writes them into a Parquet file's `huggingface` metadata; `geometry` (a
    release carrying changes' geometry): `change_geometry` (JSON text) and `image_after_state` too."""
    features = {name: {"dtype": "string", "_type": "Value"} for name in TEXT_COLUMNS}
    if geometry:
        features.update(GEOMETRY_FEATURES)
    features.update({name: {"feature": {"dtype": "string", "_type": "Value"}, "_type": "Sequence"}
                     for name in LIST_COLUMNS})
    for name, kind in media_columns(family).items():
        if kind == "Image" or typed_video:
            features[name] = {"_type": kind}
        else:  # {bytes, path} as a plain struct: lmms-eval's utils.py writes the bytes to a file for the model
            features[name] = {"bytes": {"dtype": "binary", "_type": "Value"},
                              "path": {"dtype": "string", "_type": "Value"}}
    return features


def dataset_parquet(release: Release, lines: list[dict], items, typed_video: bool = True,
                    question_ids: bool = False, texts: dict[str, list[str]] | None = None) -> bytes:
    """The release lines' Parquet (stream.format_bytes) plus the media columns, typed in the schema
    metadata so `datasets.load_dataset("parquet", ...)` gives PIL images (and videos). `question_ids` adds
    each item's scorer id as `question_id`, the key a harness's logged samples are read back by; `texts`
    adds text columns by name."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(io.BytesIO(format_bytes("parquet", lines)))
    media_type = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    for name, values in item_media(release, items).items():
        table = table.append_column(pa.field(name, media_type), pa.array(values, type=media_type))
    geometry = bool((release.card or {}).get(CARD_KEY))
    features = features_json(release.benchmark.family, typed_video, geometry)
    if geometry:  # every split has the columns the card names, null where a change has no edit
        if GEOMETRY_KEY not in table.column_names:
            table = table.append_column(GEOMETRY_KEY, pa.nulls(len(items), pa.string()))
        table = table.append_column(pa.field("image_after_state", media_type),
                                    pa.array(after_state_images(items), type=media_type))
    if question_ids:
        table = table.append_column("question_id", pa.array([item.scoring_id for item in items], pa.string()))
        features["question_id"] = {"dtype": "string", "_type": "Value"}
    for name, values in (texts or {}).items():  # further text columns, one value per item (a harness's own)
        table = table.append_column(name, pa.array(values, pa.string()))
        features[name] = {"dtype": "string", "_type": "Value"}
    table = table.select([name for name in table.column_names if name in features])
    table = table.replace_schema_metadata({"huggingface": json.dumps({"info": {"features": features}})})
    out = pa.BufferOutputStream()
    pq.write_table(table, out, compression="zstd")
    return out.getvalue().to_pybytes()


def _card_feature(name: str, feature: dict) -> dict:
    """A feature as the card's `dataset_info` lists it (`datasets`' YAML form)."""
    if feature["_type"] == "Sequence":
        return {"name": name, "sequence": feature["feature"]["dtype"]}
    dtype = feature["dtype"] if feature["_type"] == "Value" else feature["_type"].lower()
    return {"name": name, "dtype": dtype}


def dataset_card(release: Release, splits: dict[str, int], sizes: dict[str, int], num_bytes: dict[str, int]):
    """The README.md card as huggingface_hub's DatasetCard: its YAML (DatasetCardData) names the license
    and the citation the admin gave the benchmark, the configs, the features, and per split the examples
    and `num_bytes` (the split's Arrow data, as `datasets` counts it); `download_size` is the files' size."""
    from huggingface_hub import DatasetCard, DatasetCardData

    benchmark = release.benchmark
    family = benchmark.family
    categories = ["visual-question-answering"] + (["video-text-to-text"] if family == "m3verse" else [])
    citation = benchmark.citation.strip()
    data = DatasetCardData(
        license=benchmark.license or "other", pretty_name=benchmark.name, task_categories=categories,
        language=["en"], tags=[family, "hypolab"],
        configs=[{"config_name": "default",
                  "data_files": [{"split": split, "path": f"data/{split}-*.parquet"} for split in splits]}],
        dataset_info={
            "features": [_card_feature(name, feature) for name, feature in features_json(family, geometry=bool((release.card or {}).get(CARD_KEY))).items()],
            "splits": [{"name": split, "num_bytes": num_bytes[split], "num_examples": count}
                       for split, count in splits.items()],
            "download_size": sum(sizes.values()), "dataset_size": sum(num_bytes.values()),
        },
        **({"citation": citation} if citation else {}),
    )
    body = [
        f"# {benchmark.name} v{release.version}", "", benchmark.description, "", release.notes, "",
        "```python", "from datasets import load_dataset", "",
        'dataset = load_dataset("parquet", data_dir="data")  # or the Hub repository\'s name', "```", "",
        "`tags` and `provenance` are JSON text. The official scorer reads the gold as HypoLab writes it: "
        "`python -m scoring --family " + family + " --gold RELEASE_FOLDER --pred PRED.jsonl`.", "",
        "## Counts", "", "```json", json.dumps(release.card, indent=2, sort_keys=True), "```", "",
    ]
    if citation:
        body += ["## Citation", "", "```bibtex", citation, "```", ""]
    return DatasetCard(f"---\n{data.to_yaml()}\n---\n" + "\n".join(body))


def datasets_layout(release: Release) -> dict[str, bytes]:
    """The release as a Hugging Face dataset folder: data/<split>-00000-of-00001.parquet per split and
    the README.md card naming them, so `datasets.load_dataset(folder)` finds every split, typed."""
    lines, items = release_lines(release), release_items(release)
    if [line["id"] for line in lines] != [item.release_id for item in items]:
        raise DomainError("The release's items no longer match its items file.", field="release")
    by_split: dict[str, list[int]] = {}
    for k, line in enumerate(lines):
        by_split.setdefault(split_name(line), []).append(k)
    import pyarrow.parquet as pq

    files, counts, sizes, num_bytes = {}, {}, {}, {}
    for split, rows in sorted(by_split.items()):
        content = dataset_parquet(release, [lines[k] for k in rows], [items[k] for k in rows])
        files[f"data/{split}-00000-of-00001.parquet"] = content
        counts[split], sizes[split] = len(rows), len(content)
        num_bytes[split] = pq.read_table(io.BytesIO(content)).nbytes  # what `datasets` writes as num_bytes
    files["README.md"] = str(dataset_card(release, counts, sizes, num_bytes)).encode()
    return files


def write_folder(files: dict[str, bytes], folder: Path) -> None:
    for name, content in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(content)


def push_release(release: Release, repo_id: str, token: str | None, endpoint: str, private: bool = False) -> str:
    """Create the dataset repository (or keep it) and upload the release's folder in one commit; the
    commit's URL. Hub errors come back as a DomainError naming the repository."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    if repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise DomainError("Name the repository as ORG/NAME.", field="repo")
    files = datasets_layout(release)
    api = HfApi(endpoint=endpoint, token=token or None)
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        with tempfile.TemporaryDirectory() as folder:
            write_folder(files, Path(folder))
            commit = api.upload_folder(
                repo_id=repo_id, repo_type="dataset", folder_path=folder,
                commit_message=f"{release.benchmark.slug} v{release.version}",
            )
    except OfflineModeIsEnabled:
        raise DomainError("HF_HUB_OFFLINE is set: unset it to push.", field="repo") from None
    except HfHubHTTPError as exc:
        raise DomainError(f"{repo_id}: the Hub answered {exc}", field="repo") from None
    return commit.commit_url
