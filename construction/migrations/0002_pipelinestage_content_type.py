"""The content type of PipelineStage moves with it: a database made before the move has one under
review (made by migrate when review held the model), which admin log entries and permissions point
to. It becomes construction's; where migrate already made construction's, review's stale one goes
(with its permissions, which construction's own replace)."""

from django.db import migrations


def move_content_type(apps, schema_editor):
    content_types = apps.get_model("contenttypes", "ContentType")
    stale = content_types.objects.filter(app_label="review", model="pipelinestage")
    if content_types.objects.filter(app_label="construction", model="pipelinestage").exists():
        stale.delete()
    else:
        stale.update(app_label="construction")


def move_content_type_back(apps, schema_editor):
    content_types = apps.get_model("contenttypes", "ContentType")
    content_types.objects.filter(app_label="construction", model="pipelinestage").update(app_label="review")


class Migration(migrations.Migration):

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("construction", "0001_initial"),
        ("review", "0007_pipeline_stage_to_construction"),
    ]

    operations = [migrations.RunPython(move_content_type, move_content_type_back)]
