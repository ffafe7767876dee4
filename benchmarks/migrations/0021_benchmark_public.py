from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("benchmarks", "0020_release_export_labels"),
    ]

    operations = [
        migrations.AddField(
            model_name="benchmark",
            name="public",
            field=models.BooleanField(
                default=False,
                help_text="Its results page, leaderboard and paper tables are readable by anyone, signed out too; "
                "its items, gold answers, participants, releases and studies stay private.",
            ),
        ),
    ]
