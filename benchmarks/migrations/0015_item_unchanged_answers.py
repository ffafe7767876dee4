from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("benchmarks", "0014_item_overlays"),
    ]

    operations = [
        migrations.AddField(
            model_name="item",
            name="unchanged_answers",
            field=models.JSONField(
                blank=True, default=list,
                help_text="Hypo3D Tables 3-4: the acceptable answers on the scene without the context change (the "
                "'w/o change' condition is scored against them); the tag change_effect says whether the change "
                "affects the answer ('affects') or is irrelevant to it ('irrelevant').",
            ),
        ),
    ]
