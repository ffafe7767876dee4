"""Annotation's hand-written SQL, one write: the autosave a worker's page sends every few seconds, as one
statement that checks ownership, updates the draft and renews the lease (bench/load_annotators.py
drives it)."""

from datetime import datetime
from typing import NamedTuple

from django.db import connection

from .models import Assignment, AssignmentDraft, Campaign


class SavedDraft(NamedTuple):
    id: int
    descriptions: list
    content: dict
    revision: int


def update_own_draft(assignment_id: int, worker_id: int, text: str, revision: int | None, content,
                     now: datetime) -> SavedDraft | None:
    """Save `text` (and `content` unless None) into the worker's existing draft of an unsubmitted
    assignment, at `revision` unless None, and renew the lease if it is still held, in one statement
    (PostgreSQL's data-modifying WITH). None when nothing matched, and on other databases."""
    if connection.vendor != "postgresql":
        return None
    fields = AssignmentDraft._meta
    sets = ["text = %s", "revision = revision + 1", "updated_at = %s"]
    params = [assignment_id, worker_id, Assignment.Status.SUBMITTED,
              text, fields.get_field("updated_at").get_db_prep_save(now, connection)]
    if content is not None:
        sets.append("content = %s")
        params.append(fields.get_field("content").get_db_prep_save(content, connection))
    at_revision = ""
    if revision is not None:
        at_revision = " AND revision = %s"
        params.append(revision)
    params += [now, Assignment.Status.LEASED]
    assignments = Assignment._meta.db_table
    sql = (
        f"WITH own AS (SELECT a.id, a.status, c.lease_minutes FROM {assignments} a "
        f"JOIN {Campaign._meta.db_table} c ON c.id = a.campaign_id "
        f"WHERE a.id = %s AND a.worker_id = %s AND a.status <> %s), "
        f"saved AS (UPDATE {fields.db_table} SET {', '.join(sets)} "
        f"WHERE assignment_id = (SELECT id FROM own){at_revision} RETURNING id, descriptions, content, revision), "
        f"renewed AS (UPDATE {assignments} a SET lease_expires_at = %s + own.lease_minutes * interval '1 minute' "
        f"FROM own WHERE a.id = own.id AND own.status = %s AND EXISTS (SELECT 1 FROM saved) RETURNING a.id) "
        f"SELECT id, descriptions, content, revision FROM saved"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return None
    draft_id, descriptions, saved_content, new_revision = row
    decode = fields.get_field("descriptions").from_db_value
    return SavedDraft(draft_id, decode(descriptions, None, connection), decode(saved_content, None, connection),
                      new_revision)
