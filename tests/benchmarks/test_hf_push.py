"""A release as a Hugging Face dataset: the Parquet folder loads with the features its card declares, and
`push_release` uploads it with huggingface_hub to a loopback Hub that answers the calls the client makes
(create the repository, validate the card's YAML, preupload, the LFS batch and PUT, the NDJSON commit) as
the Hub documents them; never the real Hub."""

import base64
import hashlib
import io
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from django.core.management import CommandError, call_command

from benchmarks import services as benchmark_services
from benchmarks.models import AssetRole
from benchmarks.releases import life
from benchmarks.releases.hub import datasets_layout, write_folder
from tests.benchmarks.test_import_published import jpeg
from tests.factories import BenchmarkFactory, ChangeFactory, ItemFactory, SceneFactory

pytestmark = pytest.mark.django_db
TOKEN = "hf_loopback_token"
IMAGE = jpeg((30, 60, 200))
CITATION = "@inproceedings{demo2025,\n  title = {A demo benchmark},\n  year = {2025}\n}"
MEDIA = pa.struct([("bytes", pa.binary()), ("path", pa.string())])


@pytest.fixture
def release():
    bench = BenchmarkFactory(family="causalspatial", slug="causal-demo", license="cc-by-4.0", citation=CITATION)
    change = ChangeFactory(scene__benchmark=bench, scene__external_id="Collision_Level_1_0", status="approved")
    benchmark_services.store_asset(change.scene, AssetRole.IMAGE, "balls.jpg", IMAGE)
    ItemFactory(change=change, external_id="Collision_Level_1_0", answer_format="single",
                question="Will they collide? (A) Yes (B) No (C) Not sure", choices=["Yes", "No", "Not sure"],
                answers=["A"], tags={"task": "collision", "level": "L1", "not_sure": "C"})
    ItemFactory(change=change, external_id="real_0", answer_format="single", question="Will the car hit the pole?",
                choices=["Yes", "No"], answers=["B"], tags={"type": "collision", "split": "real"})
    return life.export_release(bench, "1.0.0", None, inline=True)


def card_header(readme: str) -> dict:
    assert readme.startswith("---\n")
    return yaml.safe_load(readme.split("---\n")[1])


def arrow_type(feature: dict):
    """The Arrow type `datasets` stores a card feature as."""
    if "sequence" in feature:
        return pa.list_(pa.string())
    return {"string": pa.string(), "image": MEDIA, "video": MEDIA}[feature["dtype"]]


def test_parquet_folder_loads_with_the_features_its_card_declares(release, tmp_path):
    folder = tmp_path / "hf"
    write_folder(datasets_layout(release), folder)
    header = card_header((folder / "README.md").read_text())
    assert header["license"] == "cc-by-4.0" and "visual-question-answering" in header["task_categories"]
    assert header["configs"] == [{"config_name": "default", "data_files": [
        {"split": "real", "path": "data/real-*.parquet"}, {"split": "test", "path": "data/test-*.parquet"}]}]
    declared = {f["name"]: f for f in header["dataset_info"]["features"]}
    assert declared["image"] == {"name": "image", "dtype": "image"}
    assert declared["choices"] == {"name": "choices", "sequence": "string"}
    splits = {s["name"]: s["num_examples"] for s in header["dataset_info"]["splits"]}
    assert splits == {"real": 1, "test": 1}
    assert "```bibtex\n" + CITATION + "\n```" in (folder / "README.md").read_text()
    for split, count in splits.items():
        [path] = sorted(folder.glob(f"data/{split}-*.parquet"))
        table = pq.read_table(path)
        assert table.num_rows == count
        assert {name: table.schema.field(name).type for name in table.column_names} == {
            name: arrow_type(feature) for name, feature in declared.items()}
        stored = json.loads(table.schema.metadata[b"huggingface"])["info"]["features"]
        assert stored["image"] == {"_type": "Image"} and list(stored) == list(declared)
    test_row = pq.read_table(folder / "data" / "test-00000-of-00001.parquet").to_pylist()[0]
    assert test_row["image"]["bytes"] == IMAGE and test_row["choices"] == ["Yes", "No", "Not sure"]
    assert json.loads(test_row["tags"])["not_sure"] == "C"
    try:
        import datasets
    except ImportError:
        return
    loaded = datasets.load_dataset(str(folder))
    assert loaded["test"].features["image"] == datasets.Image() and loaded["real"].num_rows == 1


class LoopbackHub(BaseHTTPRequestHandler):
    """The Hub's upload calls as huggingface_hub makes them: POST /api/repos/create, POST /api/validate-yaml,
    POST /api/datasets/{repo}/preupload/{revision} (parquet goes to LFS), POST /datasets/{repo}.git/info/lfs/
    objects/batch (basic transfer), PUT of the object, POST /api/datasets/{repo}/commit/{revision} (NDJSON)."""

    state: dict

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().strip(), 16)
                if not size:
                    self.rfile.readline()
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _answer(self, status: int, data: dict | None = None):
        body = json.dumps(data if data is not None else {}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

    def do_PUT(self):
        body = self._body()
        oid = self.path.rsplit("/", 1)[-1]
        if not self.path.startswith("/lfs-upload/") or hashlib.sha256(body).hexdigest() != oid:
            return self._answer(400, {"error": "content does not match its oid"})
        self.state["lfs"][oid] = body
        self.state["calls"].append("PUT lfs")
        return self._answer(200)

    def do_POST(self):
        body, path = self._body(), self.path.split("?")[0]
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            return self._answer(401, {"error": "Invalid credentials in Authorization header"})
        base = f"http://{self.headers['Host']}"
        if path == "/api/repos/create":
            data = json.loads(body)
            repo = f"{data['organization']}/{data['name']}"
            self.state["calls"].append(f"create {data.get('type')}")
            if repo in self.state["repos"]:
                return self._answer(409, {"error": "You already created this dataset repo", "url": f"{base}/datasets/{repo}"})
            self.state["repos"][repo] = {}
            return self._answer(200, {"url": f"{base}/datasets/{repo}", "name": repo})
        if path == "/api/validate-yaml":
            self.state["calls"].append("validate-yaml")
            return self._answer(200, {"errors": [], "warnings": []})
        if path.startswith("/api/datasets/") and "/preupload/" in path:
            self.state["calls"].append("preupload")
            files = json.loads(body)["files"]
            return self._answer(200, {"files": [
                {"path": f["path"], "uploadMode": "lfs" if f["path"].endswith(".parquet") else "regular",
                 "shouldIgnore": False, "oid": None} for f in files]})
        if path.endswith(".git/info/lfs/objects/batch"):
            self.state["calls"].append("lfs batch")
            request = json.loads(body)
            assert request["operation"] == "upload" and "basic" in request["transfers"]
            return self._answer(200, {"transfer": "basic", "objects": [
                {"oid": o["oid"], "size": o["size"], "authenticated": True,
                 "actions": {"upload": {"href": f"{base}/lfs-upload/{o['oid']}"}}} for o in request["objects"]]})
        if path.startswith("/api/datasets/") and "/commit/" in path:
            repo = path.removeprefix("/api/datasets/").split("/commit/")[0]
            self.state["calls"].append("commit")
            files = self.state["repos"][repo]
            for line in body.decode().splitlines():
                entry = json.loads(line)
                if entry["key"] == "file":
                    files[entry["value"]["path"]] = base64.b64decode(entry["value"]["content"])
                elif entry["key"] == "lfsFile":
                    files[entry["value"]["path"]] = self.state["lfs"][entry["value"]["oid"]]
                elif entry["key"] == "header":
                    self.state["message"] = entry["value"]["summary"]
            oid = hashlib.sha1(json.dumps(sorted(files)).encode()).hexdigest()
            return self._answer(200, {"commitUrl": f"{base}/datasets/{repo}/commit/{oid}", "commitOid": oid,
                                      "pullRequestUrl": None})
        return self._answer(404, {"error": f"no route {path}"})


@pytest.fixture
def hub(monkeypatch, settings):
    import huggingface_hub.constants

    state = {"repos": {}, "lfs": {}, "calls": []}
    handler = type("Hub", (LoopbackHub,), {"state": state})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    # The tests run offline; this client talks to loopback only. Xet (hf_xet) needs the Hub's CAS
    # service, so the upload takes the Hub's LFS route, as it does where hf_xet is not installed.
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_DISABLE_XET", True)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    settings.HF_ENDPOINT = f"http://127.0.0.1:{server.server_port}"
    yield state
    server.shutdown()
    server.server_close()


def test_push_release_uploads_the_folder_and_its_card(release, hub, tmp_path):
    out = io.StringIO()
    call_command("push_release", "causal-demo", "1.0.0", "--repo", "hypolab/causal-demo", stdout=out)
    assert "Pushed causal-demo v1.0.0 to hypolab/causal-demo: http://127.0.0.1" in out.getvalue()
    files = hub["repos"]["hypolab/causal-demo"]
    write_folder(datasets_layout(release), tmp_path / "local")
    local = {str(p.relative_to(tmp_path / "local")): p.read_bytes() for p in (tmp_path / "local").rglob("*")
             if p.is_file()}
    assert files == local and set(files) == {"README.md", "data/real-00000-of-00001.parquet",
                                             "data/test-00000-of-00001.parquet"}
    assert card_header(files["README.md"].decode())["license"] == "cc-by-4.0"
    calls = hub["calls"]
    assert calls[0] == "create dataset" and "validate-yaml" in calls
    assert calls.index("preupload") < calls.index("lfs batch") < calls.index("PUT lfs") < calls.index("commit")
    assert hub["calls"].count("PUT lfs") == 2 and hub["calls"][-1] == "commit"
    assert hub["message"] == "causal-demo v1.0.0"
    # Pushing again keeps the repository (409 from create is fine) and commits again.
    call_command("push_release", "causal-demo", "1.0.0", "--repo", "hypolab/causal-demo", stdout=io.StringIO())
    assert hub["calls"].count("commit") == 2


def test_push_release_refuses_a_bad_token_a_bad_repo_or_no_release(release, hub, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "wrong")
    with pytest.raises(CommandError, match="repo: hypolab/causal-demo: the Hub answered"):
        call_command("push_release", "causal-demo", "1.0.0", "--repo", "hypolab/causal-demo")
    with pytest.raises(CommandError, match="ORG/NAME"):
        call_command("push_release", "causal-demo", "1.0.0", "--repo", "no-organisation")
    with pytest.raises(CommandError, match="No release 2.0.0"):
        call_command("push_release", "causal-demo", "2.0.0", "--repo", "hypolab/causal-demo")
    assert hub["repos"] == {}


def test_m3verse_videos_are_stored_and_typed_as_datasets_videos(tmp_path):
    bench = BenchmarkFactory(family="m3verse")
    scene = SceneFactory(benchmark=bench, external_id="scene_800")
    for which in ("after", "before"):  # stored out of order: the card still says before, then after
        benchmark_services.store_asset(scene, AssetRole.VIDEO, f"{which}.mp4", f"{which} frames".encode(),
                                       {"which": which})
    ItemFactory(benchmark=bench, scene=scene, change=None, external_id="scene_800-17", answer_format="multi",
                question="Which objects newly appear?", choices=["Apple", "Mug", "Laptop"], answers=["A", "C"],
                tags={"category": "object_changes"})
    files = datasets_layout(life.export_release(bench, "1.0.0", None, inline=True))
    declared = {f["name"]: f for f in card_header(files["README.md"].decode())["dataset_info"]["features"]}
    assert declared["video_before"]["dtype"] == "video" and "image" not in declared
    assert "video-text-to-text" in card_header(files["README.md"].decode())["task_categories"]
    table = pq.read_table(io.BytesIO(files["data/test-00000-of-00001.parquet"]))
    [row] = table.to_pylist()
    assert row["video_before"] == {"bytes": b"before frames", "path": "scene_800/before.mp4"}
    assert row["video_after"]["bytes"] == b"after frames" and table.schema.field("video_after").type == MEDIA
    features = json.loads(table.schema.metadata[b"huggingface"])["info"]["features"]
    assert features["video_before"] == {"_type": "Video"}
