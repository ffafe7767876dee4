from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("modeleval", "0009_visual_inputs"),
    ]

    operations = [
        migrations.AddField(
            model_name="prediction",
            name="seed",
            field=models.BigIntegerField(
                blank=True, null=True,
                help_text="The sampling seed sent for this repeat, derived from the run's seed, the item, its variant "
                "and the repeat (modeleval.generation.repeat_seed); none where nothing is sampled.",
            ),
        ),
        migrations.AlterField(
            model_name="run",
            name="settings",
            field=models.JSONField(
                blank=True, default=dict,
                help_text="Generation settings sent with every request (modeleval.generation): temperature, top_p, "
                "max_tokens, seed, stop, reasoning_effort, thinking_budget, enable_thinking; the model's defaults "
                "otherwise.",
            ),
        ),
    ]
