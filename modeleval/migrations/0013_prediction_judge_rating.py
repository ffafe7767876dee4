from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("modeleval", "0012_run_inputs_item_frames_chain_outputs"),
    ]

    operations = [
        migrations.AddField(
            model_name="prediction",
            name="judge_rating",
            field=models.FloatField(
                blank=True, null=True,
                help_text="Hypo3D: the judge model's rating of the output, 1-5 (modeleval.secondary_metrics), asked "
                "before scoring; its run scores (s - 1) / 4 x 100 as `judge`.",
            ),
        ),
    ]
