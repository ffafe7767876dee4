import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0002_job"),
        ("modeleval", "0013_prediction_judge_rating"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="job",
            field=models.ForeignKey(
                blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+",
                to="core.job",
                help_text="Its current attempt (launch or resume): progress and report (core/jobs.py).",
            ),
        ),
    ]
