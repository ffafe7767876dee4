"""The house as scripts/house draws it from the code: no import circle between product modules (imports
inside functions count too; a TYPE_CHECKING block runs nothing), no function over 80 lines, no module over
600 and no room (app or top-level package) over 20 % of the product's lines."""

import importlib.machinery
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _house():
    path = str(ROOT / "scripts" / "house")  # a script without .py: loaded by its path
    spec = importlib.util.spec_from_loader("house", importlib.machinery.SourceFileLoader("house", path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_import_circle_between_product_modules():
    found = _house().survey()["circles"]
    assert not found, "\n".join(" -> ".join(group) for group in found)


def test_a_circle_is_found_where_two_modules_import_each_other():
    house = _house()
    assert house.circles({"a.x": {"a.y"}, "a.y": {"a.x"}, "a.z": {"a.x"}}) == [["a.x", "a.y"]]


def test_an_import_under_type_checking_is_not_a_circle(tmp_path):
    house = _house()
    (tmp_path / "one.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import two\n")
    modules = {"pkg.one": tmp_path / "one.py", "pkg.two": tmp_path / "one.py"}
    assert house.imports("pkg.one", tmp_path / "one.py", modules) == set()


def test_no_function_is_over_80_lines():
    found = _house().survey()["long_functions"]
    assert not found, "\n".join(f"{name}: {count} lines" for name, count in found)


def test_no_room_holds_over_a_fifth_of_the_product_and_no_module_is_over_600_lines():
    found = _house().survey()
    large = {room: round(share, 1) for room, (_, share) in found["rooms"].items() if share > 20}
    assert not large, f"rooms over 20 % of the product's lines: {large}"
    assert not found["long_modules"], found["long_modules"]
