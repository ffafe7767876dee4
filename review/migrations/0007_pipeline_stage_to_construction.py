"""PipelineStage now belongs to construction (construction 0001 takes it into its state with the same
table): review forgets it without touching the table, so its rows stay."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('review', '0006_dedup_run_job'),
        ('construction', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name='PipelineStage')],
            database_operations=[],
        ),
    ]
