"""Semantic top views for models keep every label readable (#29): where labels would collide (one
shortened or left to hover, which a model cannot do), every object is numbered on the map and a
legend beside the map lists "N label" in full; an uncrowded map is drawn as before."""

import io
import os

import numpy as np
from PIL import Image

from scenes.topview import render_topview


def cloud():
    rng = np.random.default_rng(0)
    xyz = np.c_[rng.uniform(0, 4, (20000, 2)), np.zeros(20000)].astype(np.float32)
    return xyz, np.full((len(xyz), 3), 200, dtype=np.uint8)


def crowded():
    return [{"instance_id": i + 1, "label": f"kitchen cabinet number {i}", "center": [1 + 0.1 * i, 2, 0.5],
             "size": [0.3, 0.3, 1]} for i in range(8)]


def test_colliding_labels_get_numbers_and_a_legend_beside_the_map():
    xyz, rgb = cloud()
    plain_png, plain = render_topview(xyz, rgb, crowded())
    png, meta = render_topview(xyz, rgb, crowded(), semantic=True)
    if os.environ.get("HYPOLAB_SAVE_TOPVIEW"):
        Image.open(io.BytesIO(png)).save(os.environ["HYPOLAB_SAVE_TOPVIEW"])
    assert plain == meta, "both maps share one meta"
    assert any(e["text_box"] is None or "shown_as" in e for e in meta["labels"]), "the labels do collide"
    assert [(e["number"], e["label"]) for e in meta["legend"]] == [
        (i + 1, f"kitchen cabinet number {i}") for i in range(8)]  # every label, whole
    image = Image.open(io.BytesIO(png)).convert("RGB")
    assert list(image.size) == meta["semantic_size"] and image.size[0] > meta["width"]
    assert image.size[1] == meta["height"]
    assert Image.open(io.BytesIO(plain_png)).size == (meta["width"], meta["height"])
    pixels = np.asarray(image)
    legend = pixels[:, meta["width"]:]
    assert (legend < 100).any(axis=2).sum() > 200, "the legend's text is drawn beside the map"
    # the map's own pixels stay where the meta puts them: hover boxes still hold on the left part
    assert (np.asarray(Image.open(io.BytesIO(plain_png)).convert("RGB"))[0, 0] == pixels[0, 0]).all()
    badges = [e["badge"] for e in meta["legend"]]
    assert all(0 <= b[0] and b[2] <= meta["width"] for b in badges), "numbers sit on the map"


def test_an_uncrowded_map_has_no_legend():
    xyz, rgb = cloud()
    objects = [{"instance_id": 1, "label": "bed", "center": [1, 1, 0.5], "size": [1, 1, 1]},
               {"instance_id": 2, "label": "desk", "center": [3, 3, 0.5], "size": [1, 1, 1]}]
    png, meta = render_topview(xyz, rgb, objects, semantic=True)
    assert meta["legend"] == [] and meta["semantic_size"] == [meta["width"], meta["height"]]
    assert Image.open(io.BytesIO(png)).size == (meta["width"], meta["height"])
    assert all(e["text_box"] for e in meta["labels"])
