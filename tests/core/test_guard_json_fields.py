"""One input guard over every parsed value (issue #34, M4): a form or multipart field that is itself JSON
(DRF's JSONField parses it), a multipart PUT (Django parses only a POST's), and a small uploaded .json or
.jsonl file are checked as a JSON body is: an escaped NUL or lone surrogate inside is a 400 naming the
field, and nothing is written (on whichever database the suite runs)."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart

from annotation import services as annotation_services
from annotation.models import AssignmentDraft
from tests.factories import SceneFactory, UserFactory

pytestmark = pytest.mark.django_db

BAD = [("\\u0000", "NUL"), ("\\ud800", "lone surrogate")]


@pytest.fixture
def leased():
    scene = SceneFactory()
    worker = UserFactory(role="annotator")
    campaign = annotation_services.create_campaign(scene.benchmark, "Moves", "movement", [scene])
    assignment = annotation_services.lease_assignment(campaign, worker)
    client = Client()
    client.force_login(worker)
    return client, assignment


def refused_naming(response, field: str, words: str) -> bool:
    body = response.json()
    return response.status_code == 400 and field in body and words in body[field][0]


@pytest.mark.parametrize("escape,words", BAD)
def test_json_inside_a_form_field_is_checked(leased, escape, words):
    client, assignment = leased
    content = '{"note": "a' + escape + 'b"}'
    url = f"/api/v1/assignments/{assignment.pk}/draft/"
    as_form = client.put(url, f"text=hello&content={content}", content_type="application/x-www-form-urlencoded")
    assert refused_naming(as_form, "content.note", words), as_form.content
    as_multipart = client.put(url, encode_multipart(BOUNDARY, {"text": "hello", "content": content}),
                              content_type=MULTIPART_CONTENT)
    assert refused_naming(as_multipart, "content.note", words), as_multipart.content
    assert not AssignmentDraft.objects.filter(assignment=assignment).exclude(text="").exists()
    # the same draft without the bad character is saved (the page sends JSON)
    fine = client.put(url, {"text": "hello", "content": {"note": "ab"}}, content_type="application/json")
    assert fine.status_code == 200 and fine.json()["content"] == {"note": "ab"}


@pytest.mark.parametrize("escape,words", BAD)
def test_a_posted_form_field_and_an_uploaded_json_file_are_checked(escape, words):
    client = Client()
    client.force_login(UserFactory(role="admin"))
    nested = client.post("/api/v1/uploads/", {"role": "image", "meta": '{"a": ["' + escape + '"]}'})
    assert refused_naming(nested, "meta.a.0", words), nested.content
    line = json.dumps({"question": "Where?"})[:-1] + ', "answers": ["x' + escape + '"]}'
    upload = SimpleUploadedFile("items.jsonl", f'{json.dumps({"question": "ok"})}\n{line}\n'.encode())
    as_file = client.post("/api/v1/items/", {"file": upload})
    assert refused_naming(as_file, "file.answers.0", words), as_file.content


def test_deep_json_in_a_field_is_refused():
    client = Client()
    deep = "[" * 200 + "]" * 200
    refused = client.post("/api/v1/uploads/", {"meta": deep})
    assert refused.status_code == 400 and "nests deeper" in refused.json()["meta"][0]
