"""PipelineStage moves here from review, table and rows as they are: this migration only tells Django's
state that construction owns `review_pipelinestage` (review 0007 drops it from review's state after)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('benchmarks', '0011_status_history'),
        ('core', '0005_status_actor_once_per_statement'),
        ('review', '0006_dedup_run_job'),  # the table exists from review 0005
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='PipelineStage',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('position', models.PositiveIntegerField(help_text='Order in the pipeline, from 1.')),
                        ('kind', models.CharField(choices=[('generate', 'Generate items from scene metadata'), ('filter_duplicates', 'Find near duplicates'), ('balance', 'Balance answers'), ('llm_filter', 'Filter with a language model'), ('release', 'Export a release')], max_length=40)),
                        ('name', models.CharField(blank=True, max_length=100)),
                        ('params', models.JSONField(blank=True, default=dict, help_text="What the stage's runner is given.")),
                        ('version', models.PositiveIntegerField(default=1, help_text='Bumped on every edit (optimistic locking).')),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('benchmark', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='pipeline_stages', to='benchmarks.benchmark')),
                        ('created_by', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('last_job', models.ForeignKey(blank=True, help_text="The stage's latest run.", null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='core.job')),
                    ],
                    options={
                        'db_table': 'review_pipelinestage',
                        'ordering': ['benchmark', 'position'],
                        'constraints': [models.UniqueConstraint(fields=('benchmark', 'position'), name='pipeline_stage_position_unique')],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
